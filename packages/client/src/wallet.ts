// Embedded-wallet flows, one awaited call each: the requests, the keys and
// the HPKE and stamping of @payments-sandbox/crypto that a login or a signed
// action takes, in the order the API asks for them. One module per concern
// under wallet/; this one is what the package exports of them.
export {
  SandboxApiError,
  WalletFlowError,
  type ApiErrorBody,
  type ApiResult,
} from "./wallet/errors.js";
export {
  openSessionSigningKey,
  type AuthSession,
  type Signer,
  type WalletSession,
} from "./wallet/keys.js";
export {
  isSignedRequestChallenge,
  signed,
  signedRetryHeaders,
  type SignedRequestChallenge,
  type SignedRetryHeaders,
} from "./wallet/signed-retries.js";
export {
  completeOtpLogin,
  otpEnclavePublicKey,
  otpLogin,
  startOtpLogin,
  type OtpChallenge,
  type OtpLoginOptions,
} from "./wallet/otp-login.js";
export { oauthLogin, oauthNonce } from "./wallet/oauth-login.js";
export {
  passkeyAssertion,
  passkeyAttestation,
  passkeyCreationOptions,
  passkeyLogin,
  registerPasskey,
  type AuthMethod,
  type PasskeyAssertionCredential,
  type PasskeyAttestationCredential,
  type PasskeyCreationOptions,
  type PasskeyRequestOptions,
} from "./wallet/passkeys.js";
export { logout, refreshSession, type RefreshSessionOptions } from "./wallet/sessions.js";
export {
  executeWalletQuote,
  payFromWallet,
  walletPayloadToSign,
  type Quote,
  type QuoteRequest,
  type WalletPaymentOptions,
} from "./wallet/payments.js";
