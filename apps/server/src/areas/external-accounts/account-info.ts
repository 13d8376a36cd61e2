import type { Schemas } from "@payments-sandbox/client";

// What the sandbox reads from an external account's accountInfo: its primary
// identifier (where the magic suffix is), the payment rails it is answered
// with, the currency its type is denominated in, and its beneficiary's name.

export type AccountInfoCreate = Schemas["ExternalAccountCreateInfoOneOf"];
export type AccountInfo = Schemas["ExternalAccountInfoOneOf"];
export type AccountType = AccountInfoCreate["accountType"];

/**
 * The fields that name the account to the receiving institution, most
 * specific first: the first one present is the primary identifier.
 */
const IDENTIFIER_FIELDS = [
  "accountNumber",
  "iban",
  "clabeNumber",
  "pixKey",
  "vpa",
  "address",
  "invoice",
  "lightningAddress",
  "bolt12",
  "phoneNumber",
] as const;

export function primaryIdentifier(info: AccountInfoCreate): string {
  const fields = info as unknown as Record<string, unknown>;
  for (const field of IDENTIFIER_FIELDS) {
    const value = fields[field];
    if (typeof value === "string" && value !== "") return value;
  }
  return "";
}

/** Every rail each bank account type can be paid on; wallets have none. */
const RAILS: Partial<Record<AccountType, readonly string[]>> = {
  AED_ACCOUNT: ["BANK_TRANSFER"],
  BDT_ACCOUNT: ["BANK_TRANSFER", "MOBILE_MONEY"],
  BRL_ACCOUNT: ["PIX"],
  BWP_ACCOUNT: ["MOBILE_MONEY"],
  CAD_ACCOUNT: ["BANK_TRANSFER"],
  CNY_ACCOUNT: ["BANK_TRANSFER", "MOBILE_MONEY"],
  COP_ACCOUNT: ["BANK_TRANSFER", "MOBILE_MONEY"],
  DKK_ACCOUNT: ["SEPA", "SEPA_INSTANT"],
  EGP_ACCOUNT: ["BANK_TRANSFER", "MOBILE_MONEY"],
  EUR_ACCOUNT: ["SEPA", "SEPA_INSTANT"],
  GBP_ACCOUNT: ["FASTER_PAYMENTS"],
  GHS_ACCOUNT: ["BANK_TRANSFER", "MOBILE_MONEY"],
  GTQ_ACCOUNT: ["BANK_TRANSFER"],
  HKD_ACCOUNT: ["BANK_TRANSFER"],
  HTG_ACCOUNT: ["MOBILE_MONEY"],
  IDR_ACCOUNT: ["BANK_TRANSFER"],
  INR_ACCOUNT: ["UPI", "NEFT", "RTGS"],
  JMD_ACCOUNT: ["BANK_TRANSFER"],
  KES_ACCOUNT: ["MOBILE_MONEY"],
  MWK_ACCOUNT: ["MOBILE_MONEY"],
  MXN_ACCOUNT: ["SPEI"],
  MYR_ACCOUNT: ["BANK_TRANSFER"],
  NGN_ACCOUNT: ["BANK_TRANSFER"],
  PHP_ACCOUNT: ["BANK_TRANSFER"],
  PKR_ACCOUNT: ["BANK_TRANSFER", "MOBILE_MONEY"],
  RWF_ACCOUNT: ["MOBILE_MONEY"],
  SGD_ACCOUNT: ["PAYNOW", "FAST", "BANK_TRANSFER"],
  SLV_ACCOUNT: ["BANK_TRANSFER", "MOBILE_MONEY"],
  THB_ACCOUNT: ["BANK_TRANSFER"],
  TZS_ACCOUNT: ["MOBILE_MONEY"],
  UGX_ACCOUNT: ["MOBILE_MONEY"],
  USD_ACCOUNT: ["ACH", "WIRE", "RTP", "FEDNOW"],
  VND_ACCOUNT: ["BANK_TRANSFER"],
  XAF_ACCOUNT: ["MOBILE_MONEY"],
  XOF_ACCOUNT: ["MOBILE_MONEY"],
  ZAR_ACCOUNT: ["BANK_TRANSFER"],
  ZMW_ACCOUNT: ["MOBILE_MONEY"],
  SWIFT_ACCOUNT: ["SWIFT"],
};

/** The rails money in a currency is paid out on (its bank account type's); none for crypto. */
export function railsOfCurrency(currency: string): readonly string[] {
  return RAILS[`${currency}_ACCOUNT` as AccountType] ?? [];
}

/** The account as answered: what was sent, with the rails a bank account can be paid on. */
export function answeredInfo(info: AccountInfoCreate): AccountInfo {
  const rails = RAILS[info.accountType];
  return (rails ? { ...info, paymentRails: [...rails] } : info) as AccountInfo;
}

/** The currency a bank account type is denominated in (`USD_ACCOUNT`: USD); none for SWIFT and wallets. */
export function currencyOfType(type: AccountType): string | undefined {
  if (type === "SWIFT_ACCOUNT") return undefined;
  const match = /^([A-Z]{3})_ACCOUNT$/.exec(type);
  return match?.[1];
}

/** Self-custody wallets whose ownership the sandbox can check by a signature, and how. */
export const SIGNATURE_CHAINS = {
  ETHEREUM_WALLET: "evm",
  BASE_WALLET: "evm",
  POLYGON_WALLET: "evm",
  PLASMA_WALLET: "evm",
  TRON_WALLET: "tron",
  SOLANA_WALLET: "solana",
} as const satisfies Partial<Record<AccountType, string>>;

export type SignatureChain = (typeof SIGNATURE_CHAINS)[keyof typeof SIGNATURE_CHAINS];

export function signatureChainOf(type: string): SignatureChain | undefined {
  return (SIGNATURE_CHAINS as Record<string, SignatureChain>)[type];
}

/** The beneficiary's name as the receiving institution would check it, if the account names one. */
export function beneficiaryNameOf(info: AccountInfoCreate): string {
  const beneficiary = (info as { beneficiary?: Record<string, unknown> }).beneficiary;
  const name = beneficiary?.["fullName"] ?? beneficiary?.["legalName"];
  return typeof name === "string" ? name : "";
}
