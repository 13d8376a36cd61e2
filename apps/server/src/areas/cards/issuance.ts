import type { CardIssuanceStep } from "@sandbox/sandbox-rules";
import type { Db } from "../../db/client.js";
import type { Card as CardRow } from "../../db/generated/sqlite/client.js";
import { emitEventViaPrisma } from "../../events/outbox.js";
import type { JobHandlers } from "../../jobs/registry.js";
import { toCard } from "./view.js";

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
  db: Db,
  cardId: string,
  through: Date,
  loaded?: CardRow,
): Promise<CardRow> {
  let row = loaded ?? (await db.card.findUniqueOrThrow({ where: { id: cardId } }));
  for (let attempt = 0; attempt < 10; attempt++) {
    const pending = pendingOf(row);
    const due = pending.filter((s) => new Date(s.at).getTime() <= through.getTime());
    if (due.length === 0) return row;
    const rest = pending.slice(due.length);
    const current = row;
    const applied = await db.$transaction(async (tx) => {
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
      const { count } = await tx.card.updateMany({
        where: { id: current.id, version: current.version },
        data: {
          state,
          stateReason,
          updatedAt,
          pendingIssuance: rest.length > 0 && state === "PROCESSING" ? JSON.stringify(rest) : null,
          version: { increment: 1 },
        },
      });
      if (count !== 1) return false;
      for (const snapshot of snapshots) {
        await emitEventViaPrisma(tx, {
          platformId: current.platformId,
          type: "CARD.STATE_CHANGE",
          objectId: current.id,
          data: toCard(snapshot),
          at: snapshot.updatedAt,
        });
      }
      return true;
    });
    row = await db.card.findUniqueOrThrow({ where: { id: cardId } });
    if (applied) return row;
  }
  throw new Error(`card ${cardId}: issuance steps kept conflicting`);
}

export function registerCardIssuanceJob(handlers: JobHandlers, db: Db): void {
  handlers.register(CARD_ISSUANCE_JOB, async (job) => {
    const { cardId, through } = job.payload as CardIssuanceJobPayload;
    const row = await db.card.findFirst({ where: { id: cardId, platformId: job.platformId } });
    if (row) await applyDueIssuance(db, row.id, new Date(through), row);
  });
}
