import type { Schemas } from "@payments-sandbox/client";
import type { AuthConfig } from "../../config.js";
import { batchedRead, insert, q, run, type Row } from "../../db/query.js";
import { ApiError, invalidInput, notFound, fieldError } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import { Activity } from "../../signing/activities.js";
import { challengeRows, type ChallengeRow } from "../../signing/challenges.js";
import { isFirstLeg, type WalletHeaders } from "../../signing/headers.js";
import {
  authChallengeBody,
  type Approval,
  type AuthChallengeBody,
  type SignedRequests,
} from "../../signing/signed-requests.js";
import { toAuthMethod, type InternalAccountService } from "../internal-accounts/service.js";
import type { OidcIdentity, OidcVerifier } from "./oidc.js";
import { newOtpTarget, otpTargetColumns } from "./otp.js";
import type { PasskeyVerifier, StoredPasskey } from "./passkey.js";

type AuthMethodRow = Row<"AuthMethod">;
type AccountRow = Row<"InternalAccount">;

/** Read on every leg of a login. */
const authMethodRows = batchedRead({ id: "id", platformId: "platformId" }, (where) =>
  q.selectFrom("AuthMethod").selectAll().where(where),
);

export type AuthMethod = Schemas["AuthMethod"];
export type AuthMethodCreated = Schemas["AuthMethodCreated"];
export type CreateAuthCredentialRequest = Schemas["CreateAuthCredentialRequest"];

/** The query of listAuthCredentials, as validated. */
export type CredentialFilter = Query<"listAuthCredentials">;

/** What a validated registration will store. */
interface NewCredential {
  nickname: string;
  oauth?: OidcIdentity;
  passkey?: StoredPasskey;
}

export class CredentialService {
  constructor(
    private readonly services: Services,
    private readonly config: AuthConfig,
    private readonly signing: SignedRequests,
    private readonly accounts: InternalAccountService,
    private readonly oidc: OidcVerifier,
    private readonly passkeys: PasskeyVerifier,
  ) {}

  /** A credential of this platform; anything else is 404. */
  async getRow(ctx: RequestContext, id: string): Promise<AuthMethodRow> {
    const row = await this.services.data.batched(authMethodRows, {
      id,
      platformId: ctx.platformId,
    });
    if (!row) throw notFound("REFERENCE_NOT_FOUND", "No credential with this id.");
    return row;
  }

  /**
   * {@link getRow}, and the challenge `requestId` names on this platform (if
   * any), read at once: on PostgreSQL each joins the turn's other reads of
   * its kind (Database.batched).
   */
  async getRowWithChallenge(
    ctx: RequestContext,
    id: string,
    requestId: string,
  ): Promise<{ method: AuthMethodRow; challenge: ChallengeRow | undefined }> {
    const { data } = this.services;
    const [method, challenge] = await Promise.all([
      data.batched(authMethodRows, { id, platformId: ctx.platformId }),
      data.batched(challengeRows, { id: requestId, platformId: ctx.platformId }),
    ]);
    if (!method) throw notFound("REFERENCE_NOT_FOUND", "No credential with this id.");
    return { method, challenge };
  }

  /** The embedded wallet a credential is registered on. */
  private async wallet(ctx: RequestContext, accountId: string): Promise<AccountRow> {
    const account = await this.accounts.getRow(ctx, accountId);
    if (account.type !== "EMBEDDED_WALLET") {
      throw invalidInput("Credentials can only be registered on EMBEDDED_WALLET accounts", {
        errors: [fieldError("body.accountId", "not an embedded wallet")],
      });
    }
    return account;
  }

  /** Every credential of the wallet, newest first; none for an account that is not the platform's. */
  async list(ctx: RequestContext, filter: CredentialFilter): Promise<{ data: AuthMethod[] }> {
    const rows = await this.services.data.all(
      q
        .selectFrom("AuthMethod")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("accountId", "=", filter.accountId)
        .orderBy("createdAt", "desc")
        .orderBy("id", "desc"),
    );
    return { data: rows.map(toAuthMethod) };
  }

  /**
   * Registers a credential. A wallet opens with its first credential
   * (EMAIL_OTP on its customer's email, internal-accounts/opening.ts), so
   * every one registered here is a signed retry stamped by an active session
   * of the same wallet; only a wallet holding none (its customer had no
   * email) registers one without a signature, having nothing to sign with.
   */
  async create(
    ctx: RequestContext,
    headers: WalletHeaders,
    input: CreateAuthCredentialRequest,
  ): Promise<{ status: 202; body: AuthChallengeBody } | { status: 201; body: AuthMethodCreated }> {
    const account = await this.wallet(ctx, input.accountId);
    const hasCredentials =
      (await this.services.data.one(this.methodsOf(account).select("id").limit(1))) !== undefined;
    const action = {
      activity: Activity.CREATE_AUTH_CREDENTIAL,
      accountId: account.id,
      parameters: input as unknown as Record<string, unknown>,
      authType: input.type,
    };

    let approval: Approval | undefined;
    let checkedAt = ctx.clock.now();
    if (hasCredentials && !isFirstLeg(headers)) {
      approval = await this.signing.approve(ctx, headers, {
        ...action,
        binding: action.parameters,
      });
      // Time-dependent checks (OIDC freshness) hold as of the first leg.
      checkedAt = approval.issuedAt;
    }
    // Checked on both legs: errors surface before the user is asked to sign.
    const prepared = await this.validate(account, input, checkedAt);
    if (hasCredentials && approval === undefined) {
      return { status: 202, body: authChallengeBody(await this.signing.issue(ctx, action)) };
    }

    const now = ctx.clock.now();
    const row: AuthMethodRow = {
      id: newId("AuthMethod"),
      platformId: ctx.platformId,
      accountId: account.id,
      type: input.type,
      nickname: prepared.nickname,
      credentialId: prepared.passkey?.credentialId ?? null,
      oauthIssuer: prepared.oauth?.iss ?? null,
      oauthAudience: prepared.oauth?.aud ?? null,
      oauthSubject: prepared.oauth?.sub ?? null,
      passkeyPublicKey: prepared.passkey?.publicKey ?? null,
      passkeyCounter: prepared.passkey ? BigInt(prepared.passkey.counter) : null,
      passkeyTransports: prepared.passkey ? JSON.stringify(prepared.passkey.transports) : null,
      otpTargetPrivateKey: null,
      otpExpiresAt: null,
      createdAt: now,
      updatedAt: now,
    };
    // A new OTP credential is sent its first code right away.
    const target =
      input.type === "EMAIL_OTP" || input.type === "SMS_OTP"
        ? await newOtpTarget(this.services.data, row)
        : undefined;
    const ttlSeconds = this.config.challengeTtlSeconds;
    const signing = this.signing;
    const stored = target ? { ...row, ...otpTargetColumns(target, now, ttlSeconds) } : row;
    await this.services.data.transaction(function* () {
      if (approval) yield* signing.consume(ctx, approval);
      yield* insert("AuthMethod", stored);
    });
    const bundle = target?.bundle;
    return {
      status: 201,
      body: {
        ...toAuthMethod(row),
        ...(bundle !== undefined ? { otpEncryptionTargetBundle: bundle } : {}),
      },
    };
  }

  /** The credentials of a wallet. */
  private methodsOf(account: AccountRow) {
    return q
      .selectFrom("AuthMethod")
      .where("platformId", "=", account.platformId)
      .where("accountId", "=", account.id);
  }

  private async validate(
    account: AccountRow,
    input: CreateAuthCredentialRequest,
    at: Date,
  ): Promise<NewCredential> {
    const existing = await this.services.data.all(
      this.methodsOf(account).select(["type", "credentialId"]),
    );
    switch (input.type) {
      case "EMAIL_OTP":
      case "SMS_OTP":
        if (existing.some((m) => m.type === input.type)) {
          throw new ApiError(
            400,
            `${input.type}_CREDENTIAL_ALREADY_EXISTS`,
            `This account already has an ${input.type} credential.`,
          );
        }
        return { nickname: await this.otpContact(account, input.type) };
      case "OAUTH": {
        const identity = await this.oidc.verify(input.oidcToken, at);
        return { nickname: identity.email ?? identity.sub, oauth: identity };
      }
      case "PASSKEY": {
        const credentialId = input.attestation.credentialId;
        if (existing.some((m) => m.type === "PASSKEY" && m.credentialId === credentialId)) {
          throw new ApiError(
            400,
            "PASSKEY_CREDENTIAL_ALREADY_EXISTS",
            "This passkey is already registered on the account.",
          );
        }
        const passkey = await this.passkeys.verifyRegistration(input.challenge, input.attestation);
        return { nickname: input.nickname, passkey };
      }
    }
  }

  /**
   * Where an OTP credential's codes go: the wallet's customer's email
   * (EMAIL_OTP) or phone number (SMS_OTP), which is also its nickname. A
   * change of either on the customer changes the credential with it.
   */
  private async otpContact(account: AccountRow, type: "EMAIL_OTP" | "SMS_OTP"): Promise<string> {
    const customer =
      account.customerId === null
        ? undefined
        : await this.services.data.one(
            q
              .selectFrom("Customer")
              .select(["email", "phoneNumber"])
              .where("platformId", "=", account.platformId)
              .where("id", "=", account.customerId),
          );
    const [field, contact] =
      type === "EMAIL_OTP"
        ? (["email", customer?.email] as const)
        : (["phoneNumber", customer?.phoneNumber] as const);
    if (!contact) {
      throw invalidInput(
        `The wallet's customer has no ${field} to send ${type} codes to: set it with PATCH /customers/{customerId} first`,
        { errors: [fieldError("body.accountId", `the customer has no ${field}`)] },
      );
    }
    return contact;
  }

  /**
   * Signed retry: removes a credential and revokes the sessions it issued.
   * The last credential of a wallet cannot be removed (the wallet would be
   * left with no way to log in).
   */
  async remove(
    ctx: RequestContext,
    id: string,
    headers: WalletHeaders,
  ): Promise<{ status: 202; body: AuthChallengeBody } | { status: 204 }> {
    const method = await this.getRow(ctx, id);
    await this.requireAnother(method);
    const action = {
      activity: Activity.DELETE_AUTH_CREDENTIAL,
      accountId: method.accountId,
      parameters: { credentialId: method.id },
      authType: method.type,
    };
    const result = await this.signing.run(ctx, headers, action, function* () {
      const now = ctx.clock.now();
      const count = yield* run(
        q
          .deleteFrom("AuthMethod")
          .where("id", "=", method.id)
          .where("platformId", "=", method.platformId),
      );
      if (count !== 1) throw notFound("REFERENCE_NOT_FOUND", "No credential with this id.");
      yield* run(
        q
          .updateTable("AuthSession")
          .set({ revokedAt: now, updatedAt: now })
          .where("authMethodId", "=", method.id)
          .where("platformId", "=", method.platformId)
          .where("revokedAt", "is", null),
      );
    });
    return result.kind === "CHALLENGE"
      ? { status: 202, body: authChallengeBody(result.body) }
      : { status: 204 };
  }

  private async requireAnother(method: AuthMethodRow): Promise<void> {
    const other = await this.services.data.one(
      q
        .selectFrom("AuthMethod")
        .select("id")
        .where("platformId", "=", method.platformId)
        .where("accountId", "=", method.accountId)
        .where("id", "!=", method.id)
        .limit(1),
    );
    if (!other) {
      throw invalidInput(
        "This is the wallet's last credential; register another one before removing it.",
      );
    }
  }
}
