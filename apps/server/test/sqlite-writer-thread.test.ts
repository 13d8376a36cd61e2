import Database from "better-sqlite3";
import { copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countRows } from "./money-helpers.js";
import { q, type Row } from "../src/db/query.js";
import {
  cardAuthorization,
  type AuthorizationPlan,
} from "../src/areas/card-transactions/authorization.js";
import { parseDatabaseUrl } from "../src/db/client.js";
import { COMPLETE_CHECKPOINT_EVERY, SqliteWriterThread } from "../src/db/sql-runner.js";
import { outboxRow } from "../src/events/outbox.js";
import { activeCard, balanceOf, type Card } from "./card-fixtures.js";
import { startSandbox, type TestSandbox } from "./harness.js";

// On SQLite the card-authorization transaction runs on a writer thread
// (db/sql-runner.ts). What crosses the thread boundary must come back intact,
// errors included, and events written there share the main thread's order.

describe("the SQLite writer thread", () => {
  let sandbox: TestSandbox;
  let writer: SqliteWriterThread;
  let card: Card;
  let accountId: string;
  let platformId: string;
  let account: Row<"InternalAccount">;

  beforeAll(async () => {
    sandbox = await startSandbox("sqlite");
    writer = new SqliteWriterThread(parseDatabaseUrl(sandbox.database.url).location);
    ({ card, accountId } = await activeCard(sandbox, 10_000));
    const row = await sandbox.server.data.one(
      q.selectFrom("Card").selectAll().where("id", "=", card.id),
    );
    if (!row) throw new Error("the card was just created");
    platformId = row.platformId;
    const accountRow = await sandbox.server.data.one(
      q.selectFrom("InternalAccount").selectAll().where("id", "=", accountId),
    );
    if (!accountRow) throw new Error("the account was just opened");
    account = accountRow;
  });
  afterAll(async () => {
    await writer?.close();
    await sandbox?.stop();
  });

  function plan(amount: number, overrides: Partial<AuthorizationPlan> = {}): AuthorizationPlan {
    const now = new Date();
    return {
      platformId,
      cardId: card.id,
      customerId: card.cardholderId,
      platformCustomerId: card.cardholderId,
      fundingAccounts: [account],
      amount: BigInt(amount),
      currency: "USD",
      merchant: { descriptor: "THREAD TEST", mcc: "5814", country: "US" },
      at: now,
      realNow: now,
      pull: { afterSeconds: 0, pullStatus: "CONFIRMED" },
      ...overrides,
    };
  }

  /** An authorization the funds cover: the program answers its row. */
  async function approve(p: AuthorizationPlan) {
    const row = await writer.run(cardAuthorization, p);
    if (!row) throw new Error("declined: no funding source covered it");
    return row;
  }

  it("answers with the committed row, its bigints and Dates intact", async () => {
    const before = await balanceOf(sandbox, accountId);
    const at = new Date("2026-01-02T03:04:05.678Z");
    const row = await approve(plan(250, { at }));
    expect(row.status).toBe("AUTHORIZED");
    expect(row.authorizedAmount).toBe(250n);
    expect(row.authorizedAt).toBeInstanceOf(Date);
    expect(row.authorizedAt.toISOString()).toBe(at.toISOString());
    expect(await balanceOf(sandbox, accountId)).toBe(before - 250);
    const stored = await sandbox.server.data.one(
      q.selectFrom("CardTransaction").selectAll().where("id", "=", row.id),
    );
    expect(stored?.heldAmount).toBe(250n);
  });

  it("rejects with the database's error when a program fails, and writes nothing", async () => {
    const before = await balanceOf(sandbox, accountId);
    const count = await countRows(sandbox.server.data, q.selectFrom("CardTransaction"));
    await expect(
      writer.run(
        cardAuthorization,
        // A NOT NULL column left empty: the insert fails inside the transaction.
        plan(100, { merchant: { descriptor: null as never, mcc: "5814", country: "US" } }),
      ),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_CONSTRAINT/) as unknown });
    expect(await balanceOf(sandbox, accountId)).toBe(before);
    expect(await countRows(sandbox.server.data, q.selectFrom("CardTransaction"))).toBe(count);
  });

  it("numbers its events from the sequence the main thread uses", async () => {
    // Each main-thread number is drawn as soon as the thread's answer is in,
    // often within the millisecond the thread drew its own: two separate
    // counters would then hand out equal or smaller numbers.
    const pairs: { objectId: string; next: bigint }[] = [];
    for (let i = 0; i < 50; i++) {
      const row = await approve(plan(1));
      const next = outboxRow({
        platformId,
        type: "CARD_TRANSACTION.AUTHORIZED",
        objectId: row.id,
        data: {},
        at: new Date(),
      }).seq;
      pairs.push({ objectId: row.id, next });
    }
    const seqs: bigint[] = [];
    for (const { objectId, next } of pairs) {
      const event = await sandbox.server.data.one(
        q.selectFrom("WebhookEvent").selectAll().where("objectId", "=", objectId),
      );
      if (!event) throw new Error(`no event about ${objectId}`);
      seqs.push(event.seq, next);
    }
    for (let i = 1; i < seqs.length; i++) {
      expect(seqs[i]! > seqs[i - 1]!, `event ${i} after event ${i - 1}`).toBe(true);
    }
  });

  it("copies its commits into the database file and reuses the WAL instead of growing it", async () => {
    const file = parseDatabaseUrl(sandbox.database.url).location;
    const walBytes = () => statSync(`${file}-wal`).size;
    const authorize = async (n: number) => {
      for (let i = 0; i < n; i++) await writer.run(cardAuthorization, plan(1));
    };
    // Each awaited run is a commit of its own: several complete checkpoints.
    await authorize(3 * COMPLETE_CHECKPOINT_EVERY);
    const walAfterFirst = walBytes();
    await authorize(6 * COMPLETE_CHECKPOINT_EVERY);
    // Started over at each complete checkpoint, the WAL keeps the size of
    // the most it held between two; never started over, it would triple.
    expect(walBytes()).toBeLessThan(walAfterFirst * 1.5);

    // The database file alone, without its WAL, comes to hold every
    // committed row once the checkpoint thread has been by (it looks every
    // 50 ms; a loaded machine may make it slower).
    const expected = await countRows(sandbox.server.data, q.selectFrom("CardTransaction"));
    const dir = mkdtempSync(join(tmpdir(), "checkpointed-"));
    const rowsInFile = () => {
      copyFileSync(file, join(dir, "copy.db"));
      const copy = new Database(join(dir, "copy.db"), { readonly: true });
      try {
        const row = copy.prepare(`SELECT COUNT(*) AS n FROM "CardTransaction"`).get();
        return (row as { n: number }).n;
      } catch {
        return -1; // copied in the middle of a checkpoint: look again
      } finally {
        copy.close();
      }
    };
    try {
      let rows = rowsInFile();
      for (let waited = 0; rows !== expected && waited < 10_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        rows = rowsInFile();
      }
      expect(rows).toBe(expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("finishes the transactions already sent before it closes", async () => {
    const before = await balanceOf(sandbox, accountId);
    const sent = Array.from({ length: 30 }, () => writer.run(cardAuthorization, plan(10)));
    await writer.close();
    const rows = await Promise.all(sent);
    expect(rows.every((r) => r?.status === "AUTHORIZED")).toBe(true);
    expect(await balanceOf(sandbox, accountId)).toBe(before - 300);
    await expect(writer.run(cardAuthorization, plan(10))).rejects.toThrow(/closed/);
  });
});
