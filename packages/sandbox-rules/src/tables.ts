/**
 * Every sandbox magic value, as data. The server evaluates these tables and the docs are rendered
 * from them; a new magic value is a new row here and nowhere else.
 *
 * The tables live by area under `tables/`; this module re-exports them all and fixes their order.
 */
import {
  CARD_AUTHORIZATION_TABLE,
  CARD_FUNDING_SOURCE_TABLE,
  CARD_ISSUANCE_TABLE,
} from "./tables/cards.js";
import {
  DOCUMENT_REVIEW_TABLE,
  INDIVIDUAL_KYC_TABLE,
  KYB_TABLE,
  KYC_TABLE,
} from "./tables/onboarding.js";
import {
  BENEFICIARY_VERIFICATION_TABLE,
  QUOTE_DESTINATION_TABLE,
  TRANSFER_TABLE,
} from "./tables/payments.js";
import { CONTACT_VERIFICATION_CODE_TABLE, SCA_CODE_TABLE } from "./tables/sca.js";
import {
  STABLECOIN_OPERATION_TABLE,
  STABLECOIN_PROVIDER_ACCOUNT_TABLE,
} from "./tables/stablecoins.js";
import { INVITATION_CONFIGURATION_TABLE, UMA_RECEIVER_TABLE } from "./tables/uma.js";
import {
  OIDC_TOKEN_TABLE,
  OTP_TABLE,
  PASSKEY_SIGNATURE_TABLE,
  WALLET_SIGNATURE_TABLE,
} from "./tables/wallet-auth.js";
import type { MagicTable } from "./types.js";

export * from "./tables/cards.js";
export * from "./tables/onboarding.js";
export * from "./tables/payments.js";
export * from "./tables/sca.js";
export * from "./tables/stablecoins.js";
export * from "./tables/uma.js";
export * from "./tables/wallet-auth.js";

/** Every table, in the order of the docs. */
export const MAGIC_TABLES: readonly MagicTable<unknown>[] = [
  KYB_TABLE,
  INDIVIDUAL_KYC_TABLE,
  KYC_TABLE,
  BENEFICIARY_VERIFICATION_TABLE,
  TRANSFER_TABLE,
  QUOTE_DESTINATION_TABLE,
  UMA_RECEIVER_TABLE,
  INVITATION_CONFIGURATION_TABLE,
  OTP_TABLE,
  SCA_CODE_TABLE,
  CONTACT_VERIFICATION_CODE_TABLE,
  OIDC_TOKEN_TABLE,
  PASSKEY_SIGNATURE_TABLE,
  WALLET_SIGNATURE_TABLE,
  CARD_ISSUANCE_TABLE,
  CARD_FUNDING_SOURCE_TABLE,
  CARD_AUTHORIZATION_TABLE,
  DOCUMENT_REVIEW_TABLE,
  STABLECOIN_PROVIDER_ACCOUNT_TABLE,
  STABLECOIN_OPERATION_TABLE,
];
