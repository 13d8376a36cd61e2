// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface WebhookEvent {
  id: string;
  platformId: string;
  type: string;
  objectId: string;
  seq: Generated<bigint>;
  payload: string;
  createdAt: Date;
  status: string;
  attemptCount: Generated<number>;
  replayCount: Generated<number>;
  nextAttemptAt: Date;
  firstAttemptAt: Date | null;
  lockedUntil: Date | null;
  lockedBy: string | null;
  deliveredAt: Date | null;
}

export interface EventOrder {
  platformId: string;
  objectId: string;
  seq: bigint;
  at: Date;
}

export interface WebhookAttempt {
  id: string;
  eventId: string;
  attemptedAt: Date;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}
