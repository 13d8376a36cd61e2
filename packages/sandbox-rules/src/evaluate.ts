import { cardIssuanceIdentifier, cardLast4 } from "./cards.js";
import type {
  BeneficiaryVerificationOutcome,
  CardAuthorizationOutcome,
  CardFundingSourceOutcome,
  CardIssuanceOutcome,
  DocumentReviewOutcome,
  ContactVerificationCodeOutcome,
  InvitationConfigurationOutcome,
  KybOutcome,
  KycOutcome,
  IndividualKycOutcome,
  LegacyShortcutOutcome,
  OidcTokenOutcome,
  OtpOutcome,
  ScaCodeOutcome,
  QuoteDestinationOutcome,
  StablecoinOperationOutcome,
  StablecoinProviderAccountOutcome,
  TransferOutcome,
  UmaReceiverOutcome,
} from "./outcomes.js";
import { suffixOf } from "./suffix.js";
import {
  BENEFICIARY_VERIFICATION_TABLE,
  CARD_AUTHORIZATION_TABLE,
  CARD_FUNDING_SOURCE_TABLE,
  CARD_ISSUANCE_TABLE,
  DOCUMENT_REVIEW_TABLE,
  CONTACT_VERIFICATION_CODE_TABLE,
  INVITATION_CONFIGURATION_TABLE,
  KYB_TABLE,
  KYC_TABLE,
  INDIVIDUAL_KYC_TABLE,
  OIDC_TOKEN_TABLE,
  OTP_TABLE,
  SCA_CODE_TABLE,
  PASSKEY_SIGNATURE_TABLE,
  QUOTE_DESTINATION_TABLE,
  STABLECOIN_OPERATION_TABLE,
  STABLECOIN_PROVIDER_ACCOUNT_TABLE,
  TRANSFER_TABLE,
  UMA_RECEIVER_TABLE,
  WALLET_SIGNATURE_TABLE,
} from "./tables.js";
import type { Evaluation, KeyReader, MagicTable } from "./types.js";
import type { UmaAddress } from "./uma.js";
import { parseUmaAddress, SANDBOX_UMA_HOST } from "./uma.js";

/** The key a table matches against, read from `input`; `null` when none can be read. */
export function readKey(reader: KeyReader, input: string | null | undefined): string | null {
  if (input === null || input === undefined) return null;
  switch (reader.kind) {
    case "suffix":
      return suffixOf(input, reader.mode);
    case "umaLocalPart": {
      const parsed = parseUmaAddress(input);
      return parsed.ok ? parsed.address.localPart : null;
    }
    case "exact":
      return input;
  }
}

/** Evaluates `table` for `input`: the matching row, or the "other" row when none matches. */
export function evaluate<O>(table: MagicTable<O>, input: string | null | undefined): Evaluation<O> {
  const key = readKey(table.key, input);
  const row = key === null ? undefined : table.rows.find((r) => r.match === key);
  return row
    ? { outcome: row.outcome, matched: row.match, row, key }
    : { outcome: table.other.outcome, matched: null, row: table.other, key };
}

/** `kybStatus` from `businessInfo.registrationNumber`. */
export function kybOutcome(registrationNumber: string | null | undefined): Evaluation<KybOutcome> {
  return evaluate(KYB_TABLE, registrationNumber);
}

/** An individual customer's `kycStatus` at creation, from `fullName`. */
export function individualKycOutcome(
  fullName: string | null | undefined,
): Evaluation<IndividualKycOutcome> {
  return evaluate(INDIVIDUAL_KYC_TABLE, fullName);
}

/** Beneficial owner `kycStatus` from `personalInfo.lastName`. */
export function kycOutcome(lastName: string | null | undefined): Evaluation<KycOutcome> {
  return evaluate(KYC_TABLE, lastName);
}

/** Beneficiary name verification from an external account's primary identifier. */
export function beneficiaryVerificationOutcome(
  accountIdentifier: string | null | undefined,
): Evaluation<BeneficiaryVerificationOutcome> {
  return evaluate(BENEFICIARY_VERIFICATION_TABLE, accountIdentifier);
}

/** Transfer in or out, from the external account's primary identifier. */
export function transferOutcome(
  accountIdentifier: string | null | undefined,
): Evaluation<TransferOutcome> {
  return evaluate(TRANSFER_TABLE, accountIdentifier);
}

/** The payment of an executed quote, from the destination external account's identifier. */
export function quoteDestinationOutcome(
  accountIdentifier: string | null | undefined,
): Evaluation<QuoteDestinationOutcome> {
  return evaluate(QUOTE_DESTINATION_TABLE, accountIdentifier);
}

/** The decrypted OTP code of an EMAIL_OTP or SMS_OTP login. */
export function otpOutcome(code: string | null | undefined): Evaluation<OtpOutcome> {
  return evaluate(OTP_TABLE, code);
}

/** The sandbox's review of an uploaded document, by its file name without the extension. */
export function documentReviewOutcome(
  fileStem: string | null | undefined,
): Evaluation<DocumentReviewOutcome> {
  return evaluate(DOCUMENT_REVIEW_TABLE, fileStem);
}

/** The `code` answering a strong customer authentication challenge. */
export function scaCodeOutcome(code: string | null | undefined): Evaluation<ScaCodeOutcome> {
  return evaluate(SCA_CODE_TABLE, code);
}

/** The `code` confirming a customer's email address or phone number. */
export function contactVerificationCodeOutcome(
  code: string | null | undefined,
): Evaluation<ContactVerificationCodeOutcome> {
  return evaluate(CONTACT_VERIFICATION_CODE_TABLE, code);
}

/** Whether a platform can create UMA invitations, from its `umaDomain`. */
export function invitationConfigurationOutcome(
  umaDomain: string | null | undefined,
): Evaluation<InvitationConfigurationOutcome> {
  return evaluate(INVITATION_CONFIGURATION_TABLE, umaDomain);
}

/** The `oidcToken` of an OAUTH registration or verify, before its claims are read. */
export function oidcTokenOutcome(token: string | null | undefined): Evaluation<OidcTokenOutcome> {
  return evaluate(OIDC_TOKEN_TABLE, token);
}

/** `assertion.signature` of a passkey verify. */
export function passkeySignatureOutcome(
  signature: string | null | undefined,
): Evaluation<LegacyShortcutOutcome> {
  return evaluate(PASSKEY_SIGNATURE_TABLE, signature);
}

/** The `Service-Wallet-Signature` header of a signed retry. */
export function walletSignatureOutcome(
  header: string | null | undefined,
): Evaluation<LegacyShortcutOutcome> {
  return evaluate(WALLET_SIGNATURE_TABLE, header);
}

export interface CardIssuanceEvaluation extends Evaluation<CardIssuanceOutcome> {
  /** The identifier that was read: `platformCardId`, or `cardholderId` when it is absent. */
  readonly identifier: string;
  readonly last4: string;
}

/** What happens after `POST /cards`, and the card's `last4`. */
export function cardIssuanceOutcome(input: {
  readonly platformCardId?: string | null | undefined;
  readonly cardholderId: string;
}): CardIssuanceEvaluation {
  const identifier = cardIssuanceIdentifier(input);
  return { ...evaluate(CARD_ISSUANCE_TABLE, identifier), identifier, last4: cardLast4(identifier) };
}

/** Whether an internal account can fund a card. */
export function cardFundingSourceOutcome(
  internalAccountId: string | null | undefined,
): Evaluation<CardFundingSourceOutcome> {
  return evaluate(CARD_FUNDING_SOURCE_TABLE, internalAccountId);
}

/** A simulated card authorization, from `merchant.descriptor`. */
export function cardAuthorizationOutcome(
  merchantDescriptor: string | null | undefined,
): Evaluation<CardAuthorizationOutcome> {
  return evaluate(CARD_AUTHORIZATION_TABLE, merchantDescriptor);
}

export interface UmaReceiverEvaluation {
  readonly outcome: UmaReceiverOutcome;
  /** The parsed address; `null` when malformed. */
  readonly address: UmaAddress | null;
  /** The local part of the matching row, or `null` when no row matched. */
  readonly matched: string | null;
}

/**
 * A receiver UMA address: malformed → 400 `INVALID_UMA_ADDRESS`; on the sandbox host → the
 * receiver table (unknown local part → 404 `UMA_NOT_FOUND`); any other host → `NOT_SANDBOX_HOST`.
 */
export function evaluateUmaReceiver(input: string): UmaReceiverEvaluation {
  const parsed = parseUmaAddress(input);
  if (!parsed.ok) {
    return {
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "INVALID_UMA_ADDRESS",
        message: `Invalid UMA address: ${parsed.problem}.`,
      },
      address: null,
      matched: null,
    };
  }
  const { address } = parsed;
  if (address.domain !== SANDBOX_UMA_HOST) {
    return { outcome: { kind: "NOT_SANDBOX_HOST" }, address, matched: null };
  }
  const { outcome, matched } = evaluate(UMA_RECEIVER_TABLE, address.address);
  return { outcome, address, matched };
}

/** The status of a linked stablecoin provider account, from its `apiClientId`. */
export function stablecoinProviderAccountOutcome(
  apiClientId: string | null | undefined,
): Evaluation<StablecoinProviderAccountOutcome> {
  return evaluate(STABLECOIN_PROVIDER_ACCOUNT_TABLE, apiClientId);
}

/** A stablecoin mint or burn, from its amount in whole fiat cents (decimal digits). */
export function stablecoinOperationOutcome(
  fiatCents: string | null | undefined,
): Evaluation<StablecoinOperationOutcome> {
  return evaluate(STABLECOIN_OPERATION_TABLE, fiatCents);
}

/**
 * Whether an id the sandbox mints would read as a magic value by chance: an
 * internal account id as a card funding source, or a customer id as the
 * cardholder that decides a card's issuance (when `platformCardId` is not
 * set). Ids are random, so about one in 2,000 would; the sandbox draws such
 * ids again, so an outcome is only ever what the partner asked for.
 */
export function mintedIdReadsAsMagic(type: string, id: string): boolean {
  if (type === "InternalAccount") return evaluate(CARD_FUNDING_SOURCE_TABLE, id).matched !== null;
  if (type === "Customer") return evaluate(CARD_ISSUANCE_TABLE, id).matched !== null;
  return false;
}
