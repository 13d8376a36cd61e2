import { defineSqlPrograms } from "../db/sql-programs.js";
import type { SqlRunner } from "../db/sql-runner.js";
import { recordWebhookAttempts, releaseAbandonedWebhookEvents } from "./outbox-attempts.js";
import { claimDueWebhookEvents } from "./outbox-claims.js";
import type { AttemptRecord, PollInput, PollResult } from "./outbox-rows.js";

// The webhook dispatcher's reads and writes of the outbox (dispatcher.ts),
// in direct SQL written once for both databases.
//
// The dispatcher runs beside the API under the same load, so each query is
// bounded by what it asks for, never by the backlog:
// - a platform's due events come from the (platformId, status,
//   nextAttemptAt) index in due order, so LIMIT ends the scan, and the
//   events of a platform without a URL are never read;
// - "is an earlier event of this object pending" is one probe of the
//   (platformId, objectId, status, seq) index.
//
// A poll is one program (claimDueWebhookEvents) and the outcomes of many
// deliveries are another (recordWebhookAttempts), each one transaction. On
// SQLite they run on the writer thread, committed with the API's writes; its
// connection's page cache stays valid across its own commits, where another
// connection would read the pages just written again on every poll.
//
// The programs are in outbox-claims.ts (a poll), outbox-attempts.ts (the
// outcomes) and outbox-order.ts (the order of an object's events), on the
// rows of outbox-rows.ts.

export type {
  AttemptRecord,
  ClaimedEvent,
  ClaimedRun,
  DeliveryTarget,
  PollInput,
  PollResult,
} from "./outbox-rows.js";
export { ownerIsGone } from "./outbox-attempts.js";
export { claimDueWebhookEvents, recordWebhookAttempts, releaseAbandonedWebhookEvents };

/** The outbox's programs: the writer thread imports this module by its URL to run them. */
const programs = defineSqlPrograms(import.meta.url, {
  claimDueWebhookEvents,
  recordWebhookAttempts,
  releaseAbandonedWebhookEvents,
});

export class OutboxStore {
  constructor(private readonly writer: SqlRunner) {}

  releaseAbandoned(input: {
    now: Date;
    self: { host: string; pid: number; owner: string };
  }): Promise<number> {
    return this.writer.run(programs.releaseAbandonedWebhookEvents, input);
  }

  poll(input: PollInput): Promise<PollResult> {
    return this.writer.run(programs.claimDueWebhookEvents, input);
  }

  async recordAttempts(
    records: readonly AttemptRecord[],
    released: readonly { id: string; token: string }[] = [],
  ): Promise<void> {
    if (records.length + released.length > 0) {
      await this.writer.run(programs.recordWebhookAttempts, { records, released });
    }
  }
}
