import type { Schemas } from "@payments-sandbox/client";

// The sandbox's card network messages, as the simulation operations take them.

export type SimulateAuthorization = Schemas["SandboxCardAuthorizationRequest"];
export type SimulateClearing = Schemas["SandboxCardClearingRequest"];
export type SimulateReturn = Schemas["SandboxCardReturnRequest"];
export type SimulateIncrement = Schemas["SimulateCardIncrementRequest"];
export type SimulateReversal = Schemas["SimulateCardReversalRequest"];
export type SimulateBalanceInquiry = Schemas["SandboxCardBalanceInquiryRequest"];
export type SimulateAuthorizationAdvice = Schemas["SandboxCardAuthorizationAdviceRequest"];
export type SimulateTransactionRef = Schemas["SandboxCardTransactionRefRequest"];

/** The network messages that create a credit to the card (nothing is pulled). */
export type CreditMessage =
  /** Dual-message: authorized now, the credit posts when the merchant clears it. */
  | "CREDIT_AUTHORIZATION"
  /** The network approved a credit authorization on the issuer's behalf; as above. */
  | "CREDIT_AUTHORIZATION_ADVICE"
  /** Single-message: authorized and posted at once. */
  | "FINANCIAL_CREDIT_AUTHORIZATION";
