// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
export interface AuthMethod {
  id: string;
  platformId: string;
  accountId: string;
  type: string;
  nickname: string;
  credentialId: string | null;
  oauthIssuer: string | null;
  oauthAudience: string | null;
  oauthSubject: string | null;
  passkeyPublicKey: string | null;
  passkeyCounter: bigint | null;
  passkeyTransports: string | null;
  otpTargetPrivateKey: string | null;
  otpExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AuthSession {
  id: string;
  platformId: string;
  accountId: string;
  authMethodId: string;
  type: string;
  nickname: string;
  credentialId: string | null;
  publicKey: string;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface SignedChallenge {
  id: string;
  platformId: string;
  accountId: string;
  activity: string;
  payload: string;
  bindingDigest: string;
  signerKind: string;
  signerPublicKey: string | null;
  authMethodId: string | null;
  authType: string | null;
  data: string | null;
  expiresAt: Date;
  consumedAt: Date | null;
  createdAt: Date;
}
