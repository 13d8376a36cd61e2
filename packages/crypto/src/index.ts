export { CryptoError, StampError } from "./errors.js";
export type { StampErrorKind } from "./errors.js";

export {
  base64Decode,
  base64Encode,
  base64urlDecode,
  base64urlEncode,
  bytesToHex,
  hexToBytes,
  sha256Hex,
  utf8,
} from "./encoding.js";

export {
  compressPublicKey,
  generateP256KeyPair,
  isValidP256PublicKeyHex,
  publicKeyFromPrivateKey,
  publicKeysEqual,
  uncompressPublicKey,
} from "./keys.js";
export type { P256KeyPair, PublicKeyForm } from "./keys.js";

export { STAMP_SCHEME, createStamp, decodeStamp, parseStamp, verifyStamp } from "./stamp.js";
export type { ParsedStamp } from "./stamp.js";

export { HPKE_INFO, hpkeOpen, hpkeSeal } from "./hpke.js";
export type { HpkeSealed } from "./hpke.js";

export {
  OTP_TARGET_BUNDLE_VERSION,
  createOtpTargetBundle,
  decodeEncryptedOtpBundle,
  decodeOtpPayload,
  decodeSessionKeyBundle,
  encodeOtpTargetBundle,
  encodeSessionKeyBundle,
  openOtpBundle,
  openSessionKeyBundle,
  sealOtpBundle,
  sealSessionKeyBundle,
  verifyOtpTargetBundle,
} from "./bundles.js";
export type { OtpTargetData } from "./bundles.js";

export {
  isVerificationTokenExpired,
  issueVerificationToken,
  verificationTokenSigningInput,
  verifyVerificationToken,
} from "./token.js";
export type { VerificationTokenClaims, VerificationTokenInput, VerificationType } from "./token.js";

export {
  WEBHOOK_SIGNATURE_VERSION,
  publicKeyToSpkiPem,
  signWebhookBody,
  spkiPemToPublicKeyHex,
  verifyWebhookSignature,
} from "./webhook.js";

export { signAsWallet, verifyWalletOwnership, walletAddressOf } from "./wallet-ownership.js";
export type { OwnershipChain } from "./wallet-ownership.js";
