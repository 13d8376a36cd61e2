import type { Schemas } from "@payments-sandbox/client";
import { passkeySignatureOutcome } from "@payments-sandbox/sandbox-rules";
import type { AuthConfig } from "../../config.js";
import { sha256Hex } from "../../crypto/sha256.js";
import { q, rowOf, run, type Row } from "../../db/query.js";
import { ApiError, invalidInput, fieldError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { RateLimiter, type AttemptWrites } from "../../limits/rate-limit.js";
import { Activity } from "../../signing/activities.js";
import {
  challengeData,
  consumeChallenge,
  requestIdRejected,
  requirePending,
  type ChallengeRow,
} from "../../signing/challenges.js";
import { isFirstLeg, type WalletHeaders } from "../../signing/headers.js";
import {
  authChallengeBody,
  type AuthChallengeBody,
  type ChallengeBody,
  toChallengeBody,
  type SignedRequests,
} from "../../signing/signed-requests.js";
import { toAuthMethod } from "../internal-accounts/service.js";
import type { CredentialService } from "./credentials.js";
import type { OidcVerifier } from "./oidc.js";
import {
  acceptOtp,
  newOtpTarget,
  otpCodeClaim,
  otpRejected,
  storeOtpTarget,
  type AcceptedOtp,
} from "./otp.js";
import type { PasskeyVerifier } from "./passkey.js";
import { AUTH_RATE_LIMITS } from "./rate-limits.js";
import {
  requireClientPublicKey,
  sealNewSessionKey,
  toAuthSession,
  type AuthSession,
  type SessionService,
} from "./sessions.js";

type AuthMethodRow = Row<"AuthMethod">;
export type AuthCredentialChallenge = Schemas["AuthCredentialChallenge"];
export type VerifyAuthCredentialRequest = Schemas["VerifyAuthCredentialRequest"];

type OtpVerify = Schemas["EmailOtpVerifyRequest"] | Schemas["SmsOtpVerifyRequest"];

interface PasskeyChallengeData {
  clientPublicKey: string;
}

const isOtp = (type: string): type is "EMAIL_OTP" | "SMS_OTP" =>
  type === "EMAIL_OTP" || type === "SMS_OTP";

/** Challenges and verification: everything that ends in a session. */
export class LoginService {
  private readonly limiter: RateLimiter;

  constructor(
    private readonly services: Services,
    private readonly config: AuthConfig,
    private readonly signing: SignedRequests,
    private readonly credentials: CredentialService,
    private readonly sessions: SessionService,
    private readonly oidc: OidcVerifier,
    private readonly passkeys: PasskeyVerifier,
  ) {
    this.limiter = new RateLimiter(services.data);
  }

  /** OTP: a new code and target bundle. PASSKEY: a pending session request to assert over. */
  async challenge(
    ctx: RequestContext,
    id: string,
    input: { clientPublicKey?: string },
  ): Promise<AuthCredentialChallenge> {
    const method = await this.credentials.getRow(ctx, id);
    if (method.type === "OAUTH") {
      throw invalidInput("OAUTH credentials need no challenge: verify with a fresh OIDC token");
    }
    if (method.type === "PASSKEY" && input.clientPublicKey === undefined) {
      throw invalidInput("clientPublicKey is required for a PASSKEY challenge", {
        errors: [fieldError("body.clientPublicKey", "required for PASSKEY")],
      });
    }
    if (input.clientPublicKey !== undefined && method.type === "PASSKEY") {
      requireClientPublicKey(input.clientPublicKey);
    }
    const now = ctx.clock.now();
    // The challenge is counted against its limit in the step that stores it
    // (one statement on PostgreSQL), and nothing is stored when it is refused.
    const limited = (store: AttemptWrites) =>
      this.limiter.hitWith(
        AUTH_RATE_LIMITS.challenge,
        method.id,
        now,
        "Too many challenges for this credential; retry later.",
        store,
      );

    const credential = toAuthMethod(method);
    if (isOtp(credential.type)) {
      const target = await newOtpTarget(this.services.data, method);
      const ttlSeconds = this.config.challengeTtlSeconds;
      await limited({ updates: [storeOtpTarget(method, target, now, ttlSeconds)] });
      return { ...credential, type: credential.type, otpEncryptionTargetBundle: target.bundle };
    }
    if (method.credentialId === null) throw new Error(`passkey ${method.id} has no credentialId`);

    const clientPublicKey = input.clientPublicKey as string;
    const credentialId = method.credentialId;
    const row = this.signing.newChallenge(ctx, {
      activity: Activity.PASSKEY_LOGIN,
      accountId: method.accountId,
      parameters: { authMethodId: method.id, clientPublicKey, credentialId },
      signer: { kind: "PASSKEY" },
      authMethodId: method.id,
      data: { clientPublicKey } satisfies PasskeyChallengeData,
    });
    await limited({ inserts: [rowOf("SignedChallenge", row)] });
    return {
      ...credential,
      type: "PASSKEY",
      credentialId,
      challenge: sha256Hex(row.payload),
      requestId: row.id,
      expiresAt: row.expiresAt.toISOString(),
    };
  }

  async verify(
    ctx: RequestContext,
    id: string,
    headers: WalletHeaders,
    input: VerifyAuthCredentialRequest,
  ): Promise<{ status: 202; body: AuthChallengeBody } | { status: 200; body: AuthSession }> {
    // The OTP retry only finishes a login whose code was already accepted.
    // It and a passkey assertion read the credential and the challenge their
    // Request-Id names together.
    const otpRetry = isOtp(input.type) && !isFirstLeg(headers);
    const requestId = otpRetry || input.type === "PASSKEY" ? headers.requestId : undefined;
    const { method, challenge } =
      requestId === undefined
        ? { method: await this.credentials.getRow(ctx, id), challenge: undefined }
        : await this.credentials.getRowWithChallenge(ctx, id, requestId);
    if (input.type !== method.type) {
      throw invalidInput(`This credential is ${method.type}; the body's type is ${input.type}`, {
        errors: [fieldError("body.type", `must be ${method.type}`)],
      });
    }
    if (otpRetry) {
      const found = requestId === undefined ? undefined : { challenge };
      return {
        status: 200,
        body: await this.finishOtp(ctx, method, headers, input as OtpVerify, found),
      };
    }

    const now = ctx.clock.now();
    try {
      switch (input.type) {
        case "EMAIL_OTP":
        case "SMS_OTP":
          return {
            status: 202,
            body: authChallengeBody(await this.startOtp(ctx, method, input, now)),
          };
        case "OAUTH":
          await this.countVerification(method, now);
          return { status: 200, body: await this.oauth(ctx, method, input) };
        case "PASSKEY":
          await this.countVerification(method, now);
          return {
            status: 200,
            body: await this.passkey(ctx, method, headers, input, challenge),
          };
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        await this.limiter.record(AUTH_RATE_LIMITS.failedVerifications, method.id, now);
      }
      throw err;
    }
  }

  /**
   * Counts a verification attempt, or refuses it with 429 (also when the
   * credential has failed too often), with the writes it is for; see
   * RateLimiter.hitWith.
   */
  private countVerification(
    method: AuthMethodRow,
    now: Date,
    writes: AttemptWrites = {},
  ): Promise<boolean> {
    return this.limiter.hitWith(
      AUTH_RATE_LIMITS.verifications,
      method.id,
      now,
      "Too many verification attempts for this credential; retry later.",
      writes,
      {
        rule: AUTH_RATE_LIMITS.failedVerifications,
        message: "Too many failed verifications for this credential; retry later.",
      },
    );
  }

  /**
   * First leg: open the bundle, check the code, bind the TEK into a token to
   * sign. The attempt is counted after the code is checked, in the step that
   * uses the code up and stores the retry's challenge (one statement on
   * PostgreSQL); a refused attempt is 429 whatever the code, so the order
   * tells a client nothing.
   */
  private async startOtp(
    ctx: RequestContext,
    method: AuthMethodRow,
    input: OtpVerify,
    now: Date,
  ): Promise<ChallengeBody> {
    const expiresAt = new Date(now.getTime() + this.config.challengeTtlSeconds * 1000);
    let accepted: AcceptedOtp;
    try {
      accepted = await acceptOtp(
        this.services.data,
        method,
        input.encryptedOtpBundle,
        now,
        expiresAt,
      );
    } catch (err) {
      // A rejected bundle or code is an attempt too.
      if (err instanceof ApiError) await this.countVerification(method, now);
      throw err;
    }
    const { tek, verificationToken } = accepted;
    const row = this.signing.newChallenge(ctx, {
      activity: Activity.OTP_LOGIN,
      accountId: method.accountId,
      parameters: { publicKey: tek, verificationToken },
      signer: { kind: "KEY", publicKey: tek },
      authMethodId: method.id,
      authType: method.type,
      binding: { authMethodId: method.id, body: input },
    });
    const used = await this.countVerification(method, now, {
      claim: otpCodeClaim(method),
      inserts: [rowOf("SignedChallenge", row)],
    });
    if (!used) throw otpRejected("OTP code was already used");
    return toChallengeBody(row);
  }

  /** Signed retry: stamped by the TEK, which becomes the session key. */
  private async finishOtp(
    ctx: RequestContext,
    method: AuthMethodRow,
    headers: WalletHeaders,
    input: OtpVerify,
    found: { challenge: ChallengeRow | undefined } | undefined,
  ): Promise<AuthSession> {
    const approval = await this.signing.approve(
      ctx,
      headers,
      {
        activity: Activity.OTP_LOGIN,
        accountId: method.accountId,
        binding: { authMethodId: method.id, body: input },
      },
      found,
    );
    const tek = approval.challenge.signerPublicKey as string;
    const row = this.sessions.newRow(ctx, method, tek);
    await this.signing.consumeInserting(ctx, approval, [rowOf("AuthSession", row)]);
    return toAuthSession(row);
  }

  private async oauth(
    ctx: RequestContext,
    method: AuthMethodRow,
    input: Schemas["OauthVerifyRequest"],
  ): Promise<AuthSession> {
    requireClientPublicKey(input.clientPublicKey);
    await this.oidc.verify(input.oidcToken, ctx.clock.now(), {
      registered: {
        iss: method.oauthIssuer ?? "",
        aud: method.oauthAudience ?? "",
        sub: method.oauthSubject ?? "",
      },
      clientPublicKey: input.clientPublicKey,
    });
    const sealed = await sealNewSessionKey(input.clientPublicKey);
    const row = await this.services.data.transaction(() =>
      this.sessions.create(ctx, method, sealed.publicKey),
    );
    return toAuthSession(row, sealed.encryptedSessionSigningKey);
  }

  private async passkey(
    ctx: RequestContext,
    method: AuthMethodRow,
    headers: WalletHeaders,
    input: Schemas["PasskeyVerifyRequest"],
    found: ChallengeRow | undefined,
  ): Promise<AuthSession> {
    if (headers.requestId === undefined) {
      throw new ApiError(
        401,
        "REQUEST_ID_MISSING",
        "The Request-Id from POST /auth/credentials/{id}/challenge is required.",
        { reason: "Passkey verify sent without Request-Id" },
      );
    }
    const now = ctx.clock.now();
    // `found`: the challenge the Request-Id names, read with the credential.
    const challenge = requirePending(found, now);
    if (challenge.activity !== Activity.PASSKEY_LOGIN || challenge.authMethodId !== method.id) {
      throw requestIdRejected("Request-Id is not a passkey challenge of this credential");
    }

    const legacy =
      this.config.legacyShortcuts &&
      passkeySignatureOutcome(input.assertion.signature).outcome.kind === "LEGACY_ACCEPT";
    const storedCounter = method.passkeyCounter ?? 0n;
    let newCounter = storedCounter;
    if (!legacy) {
      const counter = await this.passkeys.verifyAssertion(
        {
          credentialId: method.credentialId ?? "",
          publicKey: method.passkeyPublicKey ?? "",
          counter: Number(storedCounter),
          transports: JSON.parse(method.passkeyTransports ?? "[]") as string[],
        },
        sha256Hex(challenge.payload),
        input.assertion,
      );
      newCounter = BigInt(counter);
    }

    const { clientPublicKey } = challengeData<PasskeyChallengeData>(challenge);
    const sealed = await sealNewSessionKey(clientPublicKey);
    const sessions = this.sessions;
    const row = await this.services.data.transaction(function* () {
      yield* consumeChallenge(challenge, now);
      if (newCounter !== storedCounter) {
        // Guarded: two assertions with the same counter cannot both advance it.
        const count = yield* run(
          q
            .updateTable("AuthMethod")
            .set({ passkeyCounter: newCounter, updatedAt: now })
            .where("id", "=", method.id)
            .where("platformId", "=", method.platformId)
            .where((eb) =>
              method.passkeyCounter === null
                ? eb("passkeyCounter", "is", null)
                : eb("passkeyCounter", "=", method.passkeyCounter),
            ),
        );
        if (count !== 1) {
          throw new ApiError(401, "UNAUTHORIZED", "The passkey assertion was rejected.", {
            reason: "Signature counter did not increase",
          });
        }
      }
      return yield* sessions.create(ctx, method, sealed.publicKey);
    });
    return toAuthSession(row, sealed.encryptedSessionSigningKey);
  }
}
