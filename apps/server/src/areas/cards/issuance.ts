import type { CardIssuanceStep } from "@payments-sandbox/sandbox-rules";
import type { Database } from "../../db/database.js";
import { q, run } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { emitEvent } from "../../events/outbox.js";
import type { JobHandlers } from "../../jobs/registry.js";
import { toCard, type CardRow } from "./view.js";

// The sandbox issuance outcome is a list of state changes with offsets. They
// are kept on the card in sandbox time and applied by whichever comes first:
// the job scheduled for them, or any read of the card once they are due. So a
// card that "activates at once" is answered PROCESSING by POST /cards and is
// ACTIVE for the very next read, even before the job worker has polled.

export const CARD_ISSUANCE_JOB = "card.issuance";

export interface PendingIssuanceStep {
  /** Sandbox time the step is due. */
  at: string;
  state: CardIssuanceStep["state"];
  stateReason?: "ISSUER_REJECTED";
}

export interface CardIssuanceJobPayload {
  cardId: string;
  /** Apply every step due up to this sandbox time (the job's own step). */
  through: string;
}

export function planIssuance(
  steps: readonly CardIssuanceStep[],
  createdAt: Date,
): PendingIssuanceStep[] {
  return steps.map((step) => ({
    at: new Date(createdAt.getTime() + step.afterSeconds * 1000).toISOString(),
    state: step.state,
    ...(step.state === "CLOSED" ? { stateReason: step.stateReason } : {}),
  }));
}

function pendingOf(row: CardRow): PendingIssuanceStep[] {
  return row.pendingIssuance ? (JSON.parse(row.pendingIssuance) as PendingIssuanceStep[]) : [];
}

/** Whether `row` has an issuance step due by `now`. */
export function hasDueIssuance(row: CardRow, now: Date): boolean {
  const first = pendingOf(row)[0];
  return first !== undefined && new Date(first.at).getTime() <= now.getTime();
}

/**
 * Applies the card's pending issuance steps that are due by `through`, each as
 * its own state change with its own `CARD.STATE_CHANGE` event. Idempotent and
 * safe against concurrent callers: the write is conditional on the version
 * that was read, and the loser re-reads. Returns the card as it is afterwards.
 */
export async function applyDueIssuance(
  db: Database,
  loaded: CardRow,
  through: Date,
): Promise<CardRow> {
  let row = loaded;
  const reread = q
    .selectFrom("Card")
    .selectAll()
    .where("id", "=", loaded.id)
    .where("platformId", "=", loaded.platformId);
  for (let attempt = 0; attempt < 10; attempt++) {
    const pending = pendingOf(row);
    const due = pending.filter((s) => new Date(s.at).getTime() <= through.getTime());
    if (due.length === 0) return row;
    const applied = await db.transaction(() => applySteps(row, due, pending.slice(due.length)));
    const now = await db.one(reread);
    if (!now) throw new Error(`card ${loaded.id} disappeared`);
    row = now;
    if (applied) return row;
  }
  throw new Error(`card ${loaded.id}: issuance steps kept conflicting`);
}

/** The due steps as one conditional write (false: the card changed since it was read). */
function* applySteps(
  current: CardRow,
  due: readonly PendingIssuanceStep[],
  rest: readonly PendingIssuanceStep[],
): SqlProgram<boolean> {
  let state = current.state;
  let stateReason = current.stateReason;
  let updatedAt = current.updatedAt;
  const snapshots: CardRow[] = [];
  // Steps only move a card out of PROCESSING; if it has left it, they lapse.
  if (state === "PROCESSING") {
    for (const step of due) {
      state = step.state;
      stateReason = step.stateReason ?? null;
      updatedAt = new Date(step.at);
      snapshots.push({ ...current, state, stateReason, updatedAt });
      if (state !== "PROCESSING") break;
    }
  }
  const count = yield* run(
    q
      .updateTable("Card")
      .set((eb) => ({
        state,
        stateReason,
        updatedAt,
        pendingIssuance: rest.length > 0 && state === "PROCESSING" ? JSON.stringify(rest) : null,
        version: eb("version", "+", 1),
      }))
      .where("id", "=", current.id)
      .where("version", "=", current.version),
  );
  if (count !== 1) return false;
  for (const snapshot of snapshots) {
    yield* emitEvent({
      platformId: current.platformId,
      type: "CARD.STATE_CHANGE",
      objectId: current.id,
      data: toCard(snapshot),
      at: snapshot.updatedAt,
    });
  }
  return true;
}

export function registerCardIssuanceJob(handlers: JobHandlers): void {
  handlers.register(CARD_ISSUANCE_JOB, async (job, tools) => {
    const { cardId, through } = job.payload as CardIssuanceJobPayload;
    const row = await tools.data.one(
      q
        .selectFrom("Card")
        .selectAll()
        .where("id", "=", cardId)
        .where("platformId", "=", job.platformId),
    );
    if (row) await applyDueIssuance(tools.data, row, new Date(through));
  });
}
