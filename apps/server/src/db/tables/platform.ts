// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface Platform {
  id: string;
  name: string;
  webhookUrl: string | null;
  webhookPrivateKey: string;
  otpSigningPrivateKey: string;
  clockOffsetSeconds: Generated<number>;
  umaDomain: Generated<string>;
  supportedCurrencies: string | null;
  embeddedWalletConfig: string | null;
  cardTokenization2faConfig: string | null;
  feeConfigs: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiToken {
  id: string;
  platformId: string;
  name: string;
  permissions: string;
  secretSalt: string;
  secretHash: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface IdempotencyRecord {
  platformId: string;
  key: string;
  requestHash: string;
  status: string;
  responseStatus: number | null;
  responseBody: string | null;
  lockedUntil: Date;
  createdAt: Date;
  expiresAt: Date;
}

export interface RateLimit {
  key: string;
  times: string;
}

export interface Job {
  id: string;
  platformId: string;
  kind: string;
  payload: string;
  dueAt: Date;
  status: string;
  attempts: Generated<number>;
  lastError: string | null;
  lockedUntil: Date | null;
  lockedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}
