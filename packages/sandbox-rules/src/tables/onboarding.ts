/**
 * Onboarding: the KYB and KYC outcomes of customers and beneficial owners, the hosted KYC link's
 * lifetime, and the review of uploaded documents.
 */
import type {
  DocumentReviewOutcome,
  IndividualKycOutcome,
  KybOutcome,
  KycOutcome,
} from "../outcomes.js";
import type { MagicTable } from "../types.js";

/** How long a hosted KYC link can be used, on the platform's sandbox clock. */
export const KYC_LINK_SECONDS = 3600;

export const KYB_TABLE: MagicTable<KybOutcome> = {
  id: "kyb",
  title: "KYB verification",
  description: "Sets the `kybStatus` a business customer receives when KYB verification runs.",
  appliesTo:
    "`POST /verifications` for a business customer (created with `kybStatus` `UNVERIFIED`), and the registration number entered on the page of `POST /customers/{customerId}/kyc-link`",
  field: "`businessInfo.registrationNumber`",
  key: { kind: "suffix", mode: "digits" },
  rows: [
    {
      match: "001",
      outcome: { kybStatus: "PENDING" },
      description: "`kybStatus` `PENDING`: verification stays pending",
    },
    {
      match: "002",
      outcome: { kybStatus: "REJECTED" },
      description: "`kybStatus` `REJECTED`: verification is rejected",
    },
  ],
  other: {
    outcome: { kybStatus: "APPROVED" },
    description: "`kybStatus` `APPROVED`: verification is approved",
  },
  examples: ["Acme Ltd REG-000002", "HRB 123001", "12345678"],
};

export const INDIVIDUAL_KYC_TABLE: MagicTable<IndividualKycOutcome> = {
  id: "individualKyc",
  title: "Individual customer KYC",
  description:
    "Sets the `kycStatus` an individual customer receives at creation, and what submitting it with `POST /verifications` then does.",
  appliesTo:
    "`POST /customers` with `customerType` `INDIVIDUAL`, and the full name entered on the page of `POST /customers/{customerId}/kyc-link` (which sets `kycStatus` to the status below)",
  field: "`fullName`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: { kycStatus: "PENDING", onVerification: "MANUAL_REVIEW" },
      description:
        "`kycStatus` `PENDING`; `POST /verifications` answers `PENDING_MANUAL_REVIEW` once `fullName`, `birthDate`, `nationality`, `address`, `idType` and `identifier` are all present, `RESOLVE_ERRORS` naming each missing one before",
    },
    {
      match: "002",
      outcome: { kycStatus: "REJECTED", onVerification: "REFUSE" },
      description: "`kycStatus` `REJECTED` at once; `POST /verifications` is refused with 400",
    },
    {
      match: "003",
      outcome: { kycStatus: "UNVERIFIED", onVerification: "POOR_QUALITY_DOCUMENT" },
      description:
        "`kycStatus` `UNVERIFIED`; `POST /verifications` answers `RESOLVE_ERRORS` with a `POOR_QUALITY_DOCUMENT` error",
    },
  ],
  other: {
    outcome: { kycStatus: "APPROVED", onVerification: "REFUSE" },
    description: "`kycStatus` `APPROVED` at once; `POST /verifications` is refused with 400",
  },
  examples: ["Sam Lee001", "Ana Souza 002", "Kim Park003", "Jane Doe"],
};

export const KYC_TABLE: MagicTable<KycOutcome> = {
  id: "kyc",
  title: "Beneficial owner KYC",
  description: "Sets the `kycStatus` of a beneficial owner (an individual) when KYC runs.",
  appliesTo: "`POST /beneficial-owners` and `PATCH /beneficial-owners/{beneficialOwnerId}`",
  field: "`personalInfo.lastName`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: { kycStatus: "PENDING" },
      description: "`kycStatus` `PENDING`: verification stays pending",
    },
    {
      match: "002",
      outcome: { kycStatus: "REJECTED" },
      description: "`kycStatus` `REJECTED`: verification is rejected",
    },
  ],
  other: {
    outcome: { kycStatus: "APPROVED" },
    description: "`kycStatus` `APPROVED`: verification is approved",
  },
  examples: ["Smith001", "Garcia-002", "Lovelace"],
};

/** The largest document the sandbox takes, in bytes. */
export const DOCUMENT_MAX_BYTES = 10 * 1024 * 1024;

const reviewRefusal = (
  errorCode: Exclude<DocumentReviewOutcome, { kind: "ACCEPT" }>["errorCode"],
  message: string,
): DocumentReviewOutcome => ({ kind: "REJECT", status: 400, errorCode, message });

export const DOCUMENT_REVIEW_TABLE: MagicTable<DocumentReviewOutcome> = {
  id: "documentReview",
  title: "Document review",
  description:
    "Decides the sandbox's review of an uploaded document: accepted (201), or refused with the review's 400 code and nothing stored.",
  appliesTo: "`POST /documents` and `PUT /documents/{documentId}`",
  field: "the uploaded file's name, without its extension (`passport001.pdf` reads `001`)",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: reviewRefusal("LOW_QUALITY", "The document is too blurred or dark to read."),
      description: "400 `LOW_QUALITY`: unreadable",
    },
    {
      match: "002",
      outcome: reviewRefusal(
        "DATA_MISMATCH",
        "The document's details do not match the document holder's.",
      ),
      description: "400 `DATA_MISMATCH`: its details differ from the holder's",
    },
    {
      match: "003",
      outcome: reviewRefusal("EXPIRED", "The document has expired."),
      description: "400 `EXPIRED`: out of date",
    },
    {
      match: "004",
      outcome: reviewRefusal("SUSPECTED_FRAUD", "The document appears to have been altered."),
      description: "400 `SUSPECTED_FRAUD`: looks tampered with",
    },
    {
      match: "005",
      outcome: reviewRefusal(
        "UNSUITABLE_DOCUMENT",
        "This kind of document cannot be used for this verification.",
      ),
      description: "400 `UNSUITABLE_DOCUMENT`: the wrong kind of document",
    },
    {
      match: "006",
      outcome: reviewRefusal("INCOMPLETE", "Part of the document is missing."),
      description: "400 `INCOMPLETE`: pages or sides missing",
    },
  ],
  other: { outcome: { kind: "ACCEPT" }, description: "Accepted: the document is stored (201)" },
  examples: ["passport001", "id-card-front-004", "utility bill 006", "passport"],
  notes: [
    `Before review, a file must be a PDF, JPEG or PNG (by its content) of at most ${DOCUMENT_MAX_BYTES / 1024 / 1024} MB; anything else is 400 \`INVALID_INPUT\`.`,
  ],
};
