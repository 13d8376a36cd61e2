// The `type` of each signed payload. A new signed flow adds its own here.
export const Activity = {
  CREATE_AUTH_CREDENTIAL: "ACTIVITY_TYPE_CREATE_AUTH_CREDENTIAL",
  DELETE_AUTH_CREDENTIAL: "ACTIVITY_TYPE_DELETE_AUTH_CREDENTIAL",
  OTP_LOGIN: "ACTIVITY_TYPE_OTP_LOGIN",
  PASSKEY_LOGIN: "ACTIVITY_TYPE_PASSKEY_LOGIN",
  REFRESH_SESSION: "ACTIVITY_TYPE_REFRESH_SESSION",
  DELETE_SESSION: "ACTIVITY_TYPE_DELETE_SESSION",
  UPDATE_WALLET_PRIVACY: "ACTIVITY_TYPE_UPDATE_WALLET_PRIVACY",
  EXPORT_WALLET: "ACTIVITY_TYPE_EXPORT_WALLET",
  EXECUTE_QUOTE: "ACTIVITY_TYPE_EXECUTE_QUOTE",
  UPDATE_USER_EMAIL: "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
  UPDATE_USER_PHONE_NUMBER: "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER",
  // Delegated keys: the two legs of creation (signed by a session), then what
  // an ACTIVE key signs itself (see DELEGATED_KEY_SCOPE).
  CREATE_DELEGATED_USER: "ACTIVITY_TYPE_CREATE_DELEGATED_USER",
  CREATE_DELEGATED_POLICY: "ACTIVITY_TYPE_CREATE_DELEGATED_POLICY",
  SIGN_CARD_PAYMENT: "ACTIVITY_TYPE_SIGN_CARD_PAYMENT",
  DELETE_DELEGATED_USER: "ACTIVITY_TYPE_DELETE_DELEGATED_USER",
} as const;

/**
 * What a delegated key may sign, and nothing more: a pull of its card from its
 * wallet, and its own revocation. Every other activity needs a session.
 */
export type DelegatedScope =
  | { activity: typeof Activity.SIGN_CARD_PAYMENT; accountId: string; fundingSourceId: string }
  | { activity: typeof Activity.DELETE_DELEGATED_USER; accountId: string; delegatedKeyId: string };
