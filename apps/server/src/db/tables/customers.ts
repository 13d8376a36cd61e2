// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface Customer {
  id: string;
  platformId: string;
  customerType: string;
  platformCustomerId: string;
  umaAddress: string;
  region: string | null;
  currencies: Generated<string>;
  email: string | null;
  phoneNumber: string | null;
  details: Generated<string>;
  endUserTermsConsent: string | null;
  kycStatus: string | null;
  kybStatus: string | null;
  verifiedEmail: string | null;
  verifiedPhoneNumber: string | null;
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface BeneficialOwner {
  id: string;
  platformId: string;
  customerId: string;
  roles: string;
  ownershipPercentage: number;
  personalInfo: string;
  kycStatus: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface Verification {
  id: string;
  platformId: string;
  customerId: string;
  verificationStatus: string;
  errors: Generated<string>;
  createdAt: Date;
  updatedAt: Date;
}

export interface KycLink {
  id: string;
  platformId: string;
  customerId: string;
  redirectUri: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}

export interface Document {
  id: string;
  platformId: string;
  documentHolder: string;
  documentType: string;
  side: string | null;
  country: string;
  documentNumber: string | null;
  issuingAuthority: string | null;
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface LookupRequest {
  id: string;
  platformId: string;
  kind: string;
  target: string;
  customerId: string | null;
  currencies: string;
  createdAt: Date;
}

export interface BulkImportJob {
  id: string;
  platformId: string;
  status: string;
  csv: string | null;
  total: Generated<number>;
  processed: Generated<number>;
  successful: Generated<number>;
  failed: Generated<number>;
  errors: Generated<string>;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ContactVerificationCode {
  id: string;
  platformId: string;
  customerId: string;
  channel: string;
  sentTo: string;
  attempts: Generated<number>;
  expiresAt: Date;
  createdAt: Date;
}

export interface Invitation {
  code: string;
  platformId: string;
  inviterCustomerId: string;
  inviterUma: string;
  inviteeUma: string | null;
  firstName: string | null;
  amountToSend: bigint | null;
  currency: string | null;
  url: string;
  status: string;
  expiresAt: Date | null;
  claimedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
