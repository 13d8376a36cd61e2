import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDatabaseUrl, type DatabaseTarget } from "../src/db/client.js";
import { Database } from "../src/db/database.js";
import { loadMigrations, migrate } from "../src/db/migrate.js";
import { q } from "../src/db/query.js";
import type { SqlValue } from "../src/db/sql.js";
import { databases, freshDatabase, type TestDatabase } from "./harness.js";

// Agents made before the live policy shape (a limit per movement and an
// approval threshold, in minor units of whatever account moved) keep what
// they were allowed once 0013 and 0014 have run.

const BEFORE = "0013";
const at = new Date("2025-10-13T09:30:00.000Z");

describe.each(databases)("agents made before the live policy, on %s", (kind) => {
  let database: TestDatabase;
  let target: DatabaseTarget;
  let db: Database;

  /** One statement of the old schema, which the typed builder no longer knows. */
  async function oldRow(sql: string, params: SqlValue[]): Promise<void> {
    const old = Database.open(target);
    try {
      await old.transaction(function* () {
        yield { kind: "run", sql, params };
      });
    } finally {
      await old.close();
    }
  }

  beforeAll(async () => {
    database = await freshDatabase(kind);
    target = parseDatabaseUrl(database.url);
    const all = loadMigrations(target.provider);
    await migrate(
      target,
      all.filter((m) => m.name < BEFORE),
    );
    await oldRow(
      `INSERT INTO "Customer" ("id", "platformId", "customerType", "platformCustomerId", "umaAddress", "currencies", "details", "createdAt", "updatedAt") VALUES (?, ?, 'INDIVIDUAL', 'euro-first', '$euro@example.com', '["EUR","USD"]', '{}', ?, ?)`,
      ["Customer:euro", "Platform:p1", at, at],
    );
    const agent = `INSERT INTO "Agent" ("id", "platformId", "customerId", "maxTransactionAmount", "approvalRequiredAbove", "deviceCodeHash", "deviceCodeRedeemedAt", "createdAt", "updatedAt") VALUES (?, 'Platform:p1', ?, ?, ?, ?, ?, ?, ?)`;
    await oldRow(agent, ["Agent:euro", "Customer:euro", 100_000, 50_000, "hash-1", at, at, at]);
    // Its customer is gone: the policy falls back to USD.
    await oldRow(agent, ["Agent:orphan", "Customer:gone", 7_000, 3_000, "hash-2", null, at, at]);
    const token = `INSERT INTO "AgentAccessToken" ("tokenHash", "agentId", "platformId", "expiresAt", "createdAt") VALUES ('token-1', 'Agent:euro', 'Platform:p1', ?, ?)`;
    await oldRow(token, [new Date(at.getTime() + 3_600_000), at]);
    const movement = `INSERT INTO "Transaction" ("id", "platformId", "type", "status", "direction", "amount", "currency", "agentId", "createdAt", "updatedAt") VALUES (?, 'Platform:p1', ?, ?, 'DEBIT', ?, 'EUR', ?, ?, ?)`;
    await oldRow(movement, [
      "Transaction:out",
      "TRANSFER_OUT",
      "COMPLETED",
      500,
      "Agent:euro",
      at,
      at,
    ]);
    await oldRow(movement, [
      "Transaction:quoted",
      "QUOTE_PAYMENT",
      "PENDING",
      600,
      "Agent:euro",
      at,
      at,
    ]);
    await oldRow(movement, [
      "Transaction:paid",
      "QUOTE_PAYMENT",
      "COMPLETED",
      700,
      "Agent:euro",
      at,
      at,
    ]);
    await oldRow(movement, [
      "Transaction:platform",
      "TRANSFER_OUT",
      "COMPLETED",
      800,
      null,
      at,
      at,
    ]);
    await migrate(target);
    db = Database.open(target);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it("keeps each agent's limit and threshold, in its customer's first currency", async () => {
    const rows = await db.all(q.selectFrom("Agent").selectAll().orderBy("id"));
    const shape = rows.map((row) => ({
      id: row.id,
      name: row.name,
      policy: JSON.parse(row.policy) as unknown,
      deviceCodeExpiresAt: row.deviceCodeExpiresAt.toISOString(),
      deviceCodeRedeemedAt: row.deviceCodeRedeemedAt?.toISOString() ?? null,
    }));
    const permissions = [
      "VIEW_TRANSACTIONS",
      "CREATE_TRANSFERS",
      "CREATE_QUOTES",
      "EXECUTE_QUOTES",
    ];
    expect(shape).toEqual([
      {
        id: "Agent:euro",
        name: "Agent:euro",
        policy: {
          permissions,
          defaultExecutionMode: "AUTO",
          spendingLimits: { currency: "EUR", perTransactionLimit: 100_000 },
          approvalThresholds: { currency: "EUR", amount: 50_000 },
        },
        deviceCodeExpiresAt: "2025-10-14T09:30:00.000Z",
        deviceCodeRedeemedAt: at.toISOString(),
      },
      {
        id: "Agent:orphan",
        name: "Agent:orphan",
        policy: {
          permissions,
          defaultExecutionMode: "AUTO",
          spendingLimits: { currency: "USD", perTransactionLimit: 7_000 },
          approvalThresholds: { currency: "USD", amount: 3_000 },
        },
        deviceCodeExpiresAt: "2025-10-14T09:30:00.000Z",
        deviceCodeRedeemedAt: null,
      },
    ]);
  });

  it("keeps a token's hour, and counts the movements agents started", async () => {
    const token = await db.one(q.selectFrom("AgentAccessToken").selectAll());
    expect(token?.expiresAt?.toISOString()).toBe("2025-10-13T10:30:00.000Z");
    const counted = await db.all(
      q.selectFrom("Transaction").select(["id", "agentUsageAmount", "agentUsageAt"]).orderBy("id"),
    );
    expect(
      counted.map((row) => [row.id, row.agentUsageAmount, row.agentUsageAt?.toISOString() ?? null]),
    ).toEqual([
      ["Transaction:out", 500n, at.toISOString()],
      ["Transaction:paid", 700n, at.toISOString()],
      // The platform's own transfer, and a quote never executed: no agent started them.
      ["Transaction:platform", null, null],
      ["Transaction:quoted", null, null],
    ]);
  });
});
