import type { CardPullResolution } from "@payments-sandbox/sandbox-rules";
import type { Database } from "../../db/database.js";
import { one, q, run, type Row as RowOf } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import type { CardPullJobPayload } from "./authorization.js";
import { giveBack, targetOf } from "./funding-moves.js";
import { pullEffect } from "./pull-resolution.js";
import { changeTransaction, type Progress } from "./transaction-change.js";

// A pull that resolves later (the sandbox table's delay) is a job with a due
// time (authorization.ts writes it); this applies it.

type Row = RowOf<"CardTransaction">;

/** Records how a pull resolved (see pull-resolution.ts). */
function* resolvePull(
  row: Row,
  next: Progress,
  pull: { id: string; amount: bigint },
  resolution: CardPullResolution,
  at: Date,
): SqlProgram<void> {
  yield* run(
    q
      .updateTable("CardTransactionEvent")
      .set({ status: resolution.pullStatus, updatedAt: at })
      .where("id", "=", pull.id),
  );
  const effect = pullEffect(next, pull.amount, resolution);
  yield* giveBack(targetOf(row, at), effect.release, "CARD_PULL_FAILED");
  next.pullPending = effect.pullPending;
  next.pullTotal = effect.pullTotal;
  next.heldAmount = effect.heldAmount;
  next.status = effect.status;
}

/** The delayed resolution of a pending pull (job). Idempotent. */
export async function applyPullResolution(
  data: Database,
  platformId: string,
  payload: CardPullJobPayload,
): Promise<void> {
  const at = new Date(payload.at);
  await changeTransaction(
    data,
    platformId,
    payload.cardTransactionId,
    undefined,
    at,
    function* (row, next) {
      const pull = yield* one(
        q
          .selectFrom("CardTransactionEvent")
          .select(["id", "amount", "status"])
          .where("id", "=", payload.pullId)
          .where("cardTransactionId", "=", row.id),
      );
      if (!pull || pull.status !== "PENDING") return "skip";
      yield* resolvePull(row, next, pull, payload.resolution, at);
      return [];
    },
  );
}
