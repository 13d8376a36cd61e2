// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface ScaFactor {
  id: string;
  platformId: string;
  customerId: string;
  factor: string;
  status: string;
  secret: string | null;
  credentialId: string | null;
  publicKey: string | null;
  counter: Generated<number>;
  transports: string | null;
  name: string | null;
  webauthnChallenge: string | null;
  attempts: Generated<number>;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ScaChallenge {
  id: string;
  platformId: string;
  customerId: string;
  purpose: string;
  subjectId: string;
  factor: string;
  webauthnChallenge: string | null;
  attempts: Generated<number>;
  expiresAt: Date;
  createdAt: Date;
}

export interface ScaLoginState {
  customerId: string;
  platformId: string;
  sessionExpiresAt: Date | null;
  failedAttempts: Generated<number>;
  lockedUntil: Date | null;
  suspended: Generated<boolean>;
  updatedAt: Date;
}

export interface ScaFactorReset {
  id: string;
  platformId: string;
  customerId: string;
  factor: string;
  livenessAccessToken: string;
  livenessPassesAt: Date;
  expiresAt: Date;
  completedAt: Date | null;
  createdAt: Date;
}
