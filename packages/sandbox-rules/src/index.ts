export type {
  DefaultRow,
  Evaluation,
  KeyReader,
  MagicRow,
  MagicTable,
  MagicTableId,
  Rejection,
  SuffixMode,
} from "./types.js";
export type * from "./outcomes.js";
export { SUFFIX_LENGTH, lastCharacters, suffixOf } from "./suffix.js";
export type { UmaAddress, UmaParseResult } from "./uma.js";
export { SANDBOX_UMA_HOST, UMA_LOCAL_PART_MAX_LENGTH, isHostName, parseUmaAddress } from "./uma.js";
export { CARD_LAST4_PREFIX, cardIssuanceIdentifier, cardLast4 } from "./cards.js";
export type { SandboxInstitution, SandboxUmaProvider, SandboxVasp } from "./directories.js";
export {
  SANDBOX_INSTITUTIONS,
  SANDBOX_UMA_PROVIDERS,
  SANDBOX_VASPS,
  institutionsFor,
} from "./directories.js";
export {
  BENEFICIARY_VERIFICATION_TABLE,
  CARD_AUTHORIZATION_TABLE,
  CARD_DELAYED_ACTIVATION_SECONDS,
  CARD_DELAYED_PULL_SECONDS,
  CARD_FUNDING_SOURCE_TABLE,
  CARD_ISSUANCE_TABLE,
  DOCUMENT_MAX_BYTES,
  DOCUMENT_REVIEW_TABLE,
  INDIVIDUAL_KYC_TABLE,
  KYB_TABLE,
  KYC_LINK_SECONDS,
  KYC_TABLE,
  LEGACY_OIDC_TOKEN,
  LEGACY_PASSKEY_SIGNATURE,
  LEGACY_WALLET_SIGNATURE,
  MAGIC_TABLES,
  OIDC_CLOCK_SKEW_SECONDS,
  OIDC_TOKEN_MAX_AGE_SECONDS,
  OIDC_TOKEN_TABLE,
  OTP_TABLE,
  PASSKEY_SIGNATURE_TABLE,
  QUOTE_DESTINATION_TABLE,
  QUOTE_RETURN_AFTER_SECONDS,
  QUOTE_SLOW_COMPLETION_SECONDS,
  SANDBOX_OTP_CODE,
  SANDBOX_SCA_CODE,
  SCA_CHALLENGE_SECONDS,
  SCA_CODE_TABLE,
  SCA_MAX_ATTEMPTS,
  SCA_REGIONS,
  TRANSFER_DELAYED_FAILURE_SECONDS,
  TRANSFER_TABLE,
  UMA_RECEIVER_TABLE,
  WALLET_SIGNATURE_TABLE,
} from "./tables.js";
export type { CardIssuanceEvaluation, UmaReceiverEvaluation } from "./evaluate.js";
export {
  beneficiaryVerificationOutcome,
  cardAuthorizationOutcome,
  cardFundingSourceOutcome,
  cardIssuanceOutcome,
  documentReviewOutcome,
  evaluate,
  evaluateUmaReceiver,
  individualKycOutcome,
  kybOutcome,
  kycOutcome,
  oidcTokenOutcome,
  otpOutcome,
  scaCodeOutcome,
  passkeySignatureOutcome,
  quoteDestinationOutcome,
  readKey,
  transferOutcome,
  walletSignatureOutcome,
} from "./evaluate.js";
export type { DocsCheck } from "./render.js";
export { GENERATED_HEADER, checkRenderedDocs, renderMagicValuesMarkdown } from "./render.js";
