import type { Schemas } from "@payments-sandbox/client";
import { all, found, prepared, q, run } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { openMissingAccounts } from "../internal-accounts/opening.js";
import { Activity } from "../../signing/activities.js";
import { challengeData } from "../../signing/challenges.js";
import type { WalletHeaders } from "../../signing/headers.js";
import type { ChallengeBody, SignedRequests } from "../../signing/signed-requests.js";
import { conflictOf } from "./conflicts.js";
import { umaAddressOf } from "./input-checks.js";
import {
  currenciesOf,
  detailsOf,
  toCustomer,
  type Customer,
  type CustomerRow,
  type Details,
} from "./view.js";

export type CustomerUpdate = Schemas["CustomerUpdateRequestOneOf"];

/** The customer as `input` leaves it: only the fields sent change. */
function updatedRow(ctx: RequestContext, current: CustomerRow, input: CustomerUpdate): CustomerRow {
  const stored = JSON.parse(current.details) as Details;
  const details = detailsOf(input);
  const merged: Details = { ...stored, ...details };
  if (current.customerType === "BUSINESS" && details.businessInfo !== undefined) {
    // businessInfo changes field by field, like the customer itself.
    merged.businessInfo = {
      ...(stored.businessInfo as Details | undefined),
      ...(details.businessInfo as Details),
    };
  }
  return {
    ...current,
    ...(input.currencies !== undefined ? { currencies: JSON.stringify(input.currencies) } : {}),
    ...(input.email !== undefined ? { email: input.email } : {}),
    ...(input.phoneNumber !== undefined ? { phoneNumber: input.phoneNumber } : {}),
    ...(input.umaAddress !== undefined ? { umaAddress: umaAddressOf(input.umaAddress) } : {}),
    ...(input.endUserTermsConsent !== undefined
      ? { endUserTermsConsent: JSON.stringify(input.endUserTermsConsent) }
      : {}),
    details: JSON.stringify(merged),
    updatedAt: ctx.clock.now(),
  };
}

function* writeCustomer(
  ctx: RequestContext,
  current: CustomerRow,
  row: CustomerRow,
): SqlProgram<void> {
  yield* found(
    q
      .updateTable("Customer")
      .set({
        currencies: row.currencies,
        email: row.email,
        phoneNumber: row.phoneNumber,
        umaAddress: row.umaAddress,
        endUserTermsConsent: row.endUserTermsConsent,
        details: row.details,
        updatedAt: row.updatedAt,
      })
      .where("id", "=", row.id)
      .where("platformId", "=", ctx.platformId)
      .where("deletedAt", "is", null)
      .returning("id"),
    `customer ${row.id}`,
  );
  // A currency added to the customer opens its account; none is ever closed here.
  if (row.currencies !== current.currencies) {
    yield* openMissingAccounts(
      { platformId: ctx.platformId, customerId: row.id, email: row.email },
      currenciesOf(row),
      row.updatedAt,
    );
  }
}

/** A new email or phone number: what OTP credentials it concerns and how it is signed. */
function contactChange(current: CustomerRow, input: CustomerUpdate) {
  if (input.email !== undefined && input.email !== current.email) {
    return {
      credentialType: "EMAIL_OTP",
      activity: Activity.UPDATE_USER_EMAIL,
      parameter: { userEmail: input.email },
      value: input.email,
    } as const;
  }
  if (input.phoneNumber !== undefined && input.phoneNumber !== current.phoneNumber) {
    return {
      credentialType: "SMS_OTP",
      activity: Activity.UPDATE_USER_PHONE_NUMBER,
      parameter: { userPhoneNumber: input.phoneNumber },
      value: input.phoneNumber,
    } as const;
  }
  return undefined;
}

/** The customer's wallet credentials of one OTP type, in a stable order. */
const tiedCredentials = prepared((args: { platformId: string; customerId: string; type: string }) =>
  q
    .selectFrom("AuthMethod")
    .innerJoin("InternalAccount", "InternalAccount.id", "AuthMethod.accountId")
    .select("AuthMethod.id")
    .where("AuthMethod.platformId", "=", args.platformId)
    .where("InternalAccount.platformId", "=", args.platformId)
    .where("InternalAccount.customerId", "=", args.customerId)
    .where("InternalAccount.type", "=", "EMBEDDED_WALLET")
    .where("AuthMethod.type", "=", args.type)
    .orderBy("AuthMethod.id"),
);

/**
 * Writes a checked change to a customer. A new email (phone number) of a
 * customer whose embedded wallets have EMAIL_OTP (SMS_OTP) credentials is a
 * signed retry, since it moves where those wallets' codes go: the first call
 * answers 202, the retry stamped by one of the customer's wallet sessions
 * changes the customer and every such credential together.
 */
export class CustomerUpdates {
  constructor(
    private readonly services: Services,
    private readonly signing: SignedRequests,
  ) {}

  async apply(
    ctx: RequestContext,
    current: CustomerRow,
    headers: WalletHeaders,
    input: CustomerUpdate,
  ): Promise<{ status: 200; body: Customer } | { status: 202; body: ChallengeBody }> {
    const id = current.id;
    const row = updatedRow(ctx, current, input);
    const contact = contactChange(current, input);
    const tied = contact
      ? await this.services.data.all(
          tiedCredentials({
            platformId: ctx.platformId,
            customerId: id,
            type: contact.credentialType,
          }),
        )
      : [];
    if (!contact || tied.length === 0) {
      await this.write(ctx, row, () => writeCustomer(ctx, current, row));
      return { status: 200, body: toCustomer(row) };
    }

    const credentialIds = tied.map((credential) => credential.id);
    const outcome = await this.signing.handle(ctx, headers, {
      activity: contact.activity,
      accountId: id,
      signer: { kind: "CUSTOMER_SESSION" },
      parameters: { userId: id, ...contact.parameter },
      binding: input,
      data: { credentialIds },
    });
    if (outcome.kind === "CHALLENGE") return { status: 202, body: outcome.body };
    const { approval } = outcome;
    const signing = this.signing;
    const promised = challengeData<{ credentialIds: string[] }>(approval.challenge).credentialIds;
    await this.write(ctx, row, function* () {
      yield* signing.consume(ctx, approval);
      // The credentials the signer agreed to change are still exactly the tied ones.
      const now = yield* all(
        tiedCredentials({
          platformId: ctx.platformId,
          customerId: id,
          type: contact.credentialType,
        }),
      );
      if (now.map((credential) => credential.id).join() !== promised.join()) {
        throw new ApiError(
          409,
          "EMAIL_OTP_CREDENTIAL_SET_CHANGED",
          `The ${contact.credentialType} credentials of customer ${id}'s wallets changed since the challenge was issued; start again`,
        );
      }
      yield* writeCustomer(ctx, current, row);
      yield* run(
        q
          .updateTable("AuthMethod")
          .set({ nickname: contact.value, updatedAt: row.updatedAt })
          .where("platformId", "=", ctx.platformId)
          .where("id", "in", promised),
      );
    });
    return { status: 200, body: toCustomer(row) };
  }

  private async write(
    ctx: RequestContext,
    row: CustomerRow,
    program: () => SqlProgram<unknown>,
  ): Promise<void> {
    try {
      await this.services.data.transaction(program);
    } catch (err) {
      throw await conflictOf(this.services, ctx, err, row);
    }
  }
}
