import type { Schemas } from "@payments-sandbox/client";
import { individualKycOutcome, parseUmaAddress } from "@payments-sandbox/sandbox-rules";
import { isUniqueViolation } from "../../db/errors.js";
import { all, found, insertAll, prepared, q, rowOf, run, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput, isNotFound, notFound } from "../../errors.js";
import {
  emitEvent,
  notifyEventEmitted,
  outboxInsert,
  type EventInput,
} from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { Query } from "../../http/operation-types.js";
import { type Page, newestCountedPage, withinTimes } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import {
  firstCredentialRows,
  newAccountRows,
  openMissingAccounts,
} from "../internal-accounts/opening.js";
import { supportedCurrenciesOf } from "../platform/service.js";
import { contactVerificationOf } from "./contact-channels.js";
import { Activity } from "../../signing/activities.js";
import { challengeData } from "../../signing/challenges.js";
import type { WalletHeaders } from "../../signing/headers.js";
import type { ChallengeBody, SignedRequests } from "../../signing/signed-requests.js";

export type Customer = Schemas["CustomerOneOf"];
export type CustomerCreate = Schemas["CustomerCreateRequestOneOf"];
export type CustomerUpdate = Schemas["CustomerUpdateRequestOneOf"];
export type EndUserTerms = Schemas["EndUserTerms"];
type KycStatus = Schemas["KycStatus"];
type KybStatus = Schemas["KybStatus"];
export type CustomerRow = Row<"Customer">;

/** The query of listCustomers, as validated. */
export type CustomerFilter = Query<"listCustomers">;

/** The version of the end user terms a consent must quote. */
export const END_USER_TERMS_VERSION = "2025-10-13";

/**
 * Fields every customer has, each a column; the rest of a request body is the
 * type's own fields (checked by the contract, which allows no others), kept
 * whole in `details`. Statuses sent by the caller are ignored: KYC and KYB
 * decide them.
 */
const COMMON_FIELDS = new Set([
  "platformCustomerId",
  "customerType",
  "region",
  "currencies",
  "email",
  "phoneNumber",
  "umaAddress",
  "endUserTermsConsent",
  "kycStatus",
  "kybStatus",
]);

/** Never returned (writeOnly in the contract). */
const WRITE_ONLY_DETAILS = new Set(["identifier"]);

type Details = Record<string, unknown>;

function detailsOf(input: Record<string, unknown>): Details {
  return Object.fromEntries(Object.entries(input).filter(([key]) => !COMMON_FIELDS.has(key)));
}

/** The customer's currency codes (stored as a JSON array). */
export function currenciesOf(row: Pick<CustomerRow, "currencies">): string[] {
  return JSON.parse(row.currencies) as string[];
}

export function toCustomer(row: CustomerRow): Customer {
  // Built field by field: this runs for every row of every customer list.
  const customer: Record<string, unknown> = {
    id: row.id,
    platformCustomerId: row.platformCustomerId,
  };
  if (row.region !== null) customer.region = row.region;
  customer.currencies = currenciesOf(row);
  if (row.email !== null) customer.email = row.email;
  if (row.phoneNumber !== null) customer.phoneNumber = row.phoneNumber;
  customer.umaAddress = row.umaAddress;
  if (row.endUserTermsConsent !== null) {
    customer.endUserTermsConsent = JSON.parse(
      row.endUserTermsConsent,
    ) as Schemas["EndUserTermsConsent"];
  }
  customer.createdAt = row.createdAt.toISOString();
  customer.updatedAt = row.updatedAt.toISOString();
  customer.isDeleted = row.deletedAt !== null;
  const contactVerification = contactVerificationOf(row);
  if (contactVerification) customer.contactVerification = contactVerification;
  const details = JSON.parse(row.details) as Details;
  for (const key in details) {
    if (!WRITE_ONLY_DETAILS.has(key)) customer[key] = details[key];
  }
  if (row.customerType === "BUSINESS") {
    customer.customerType = "BUSINESS";
    if (row.kybStatus !== null) customer.kybStatus = row.kybStatus as KybStatus;
  } else {
    customer.customerType = "INDIVIDUAL";
    if (row.kycStatus !== null) customer.kycStatus = row.kycStatus as KycStatus;
  }
  return customer as Customer;
}

/** The webhook type a customer's new KYC or KYB status is announced with, if any. */
export function statusEventType(
  customerType: string,
  status: string | null,
): `CUSTOMER.${"KYC" | "KYB"}_${"APPROVED" | "REJECTED" | "PENDING"}` | undefined {
  if (status !== "APPROVED" && status !== "REJECTED" && status !== "PENDING") return undefined;
  return `CUSTOMER.${customerType === "BUSINESS" ? "KYB" : "KYC"}_${status}`;
}

/** The customer's status event, written with the change that caused it. */
export function* emitStatusEvent(
  ctx: Pick<RequestContext, "platformId">,
  row: CustomerRow,
): SqlProgram<void> {
  const event = statusEvent(ctx, row);
  if (event) yield* emitEvent(event);
}

/** The customer's status event, when its status is one that is announced. */
function statusEvent(
  ctx: Pick<RequestContext, "platformId">,
  row: CustomerRow,
): EventInput | undefined {
  const type = statusEventType(
    row.customerType,
    row.customerType === "BUSINESS" ? row.kybStatus : row.kycStatus,
  );
  if (type === undefined) return undefined;
  return {
    platformId: ctx.platformId,
    type,
    objectId: row.id,
    data: toCustomer(row),
    at: row.updatedAt,
  };
}

function checkTermsConsent(consent: Schemas["EndUserTermsConsentRequest"] | undefined): void {
  if (consent !== undefined && consent.termsVersion !== END_USER_TERMS_VERSION) {
    throw new ApiError(
      400,
      "END_USER_TERMS_VERSION_NOT_FOUND",
      `No end user terms have version ${consent.termsVersion}; the current version is ${END_USER_TERMS_VERSION} (GET /customers/end-user-terms)`,
      {
        details: {
          errors: [fieldError("body.endUserTermsConsent.termsVersion", "unknown version")],
        },
      },
    );
  }
}

/** A UMA address as stored: well-formed and lower case (UMA addresses are case-insensitive). */
function umaAddressOf(address: string): string {
  const parsed = parseUmaAddress(address);
  if (!parsed.ok) {
    throw new ApiError(400, "INVALID_UMA_ADDRESS", `umaAddress ${address}: ${parsed.problem}`, {
      details: { errors: [fieldError("body.umaAddress", parsed.problem)] },
    });
  }
  return parsed.address.address;
}

/** `$<platformCustomerId>@<umaDomain>`, with what UMA does not allow in a username made `_`. */
function defaultUmaAddress(platformCustomerId: string, umaDomain: string): string {
  const username = platformCustomerId.toLowerCase().replace(/[^a-z0-9._+-]/g, "_");
  return umaAddressOf(`$${username.slice(0, 63)}@${umaDomain}`);
}

const customerRow = prepared((args: { id: string; platformId: string }) =>
  q
    .selectFrom("Customer")
    .selectAll()
    .where("id", "=", args.id)
    .where("platformId", "=", args.platformId),
);

/** What a new customer takes from its platform: its UMA domain and supported currencies. */
const platformDefaults = prepared((args: { platformId: string }) =>
  q
    .selectFrom("Platform")
    .select(["umaDomain", "supportedCurrencies"])
    .where("id", "=", args.platformId),
);

const customerWithPlatformId = prepared(
  (args: { platformId: string; platformCustomerId: string }) =>
    q
      .selectFrom("Customer")
      .select("id")
      .where("platformId", "=", args.platformId)
      .where("platformCustomerId", "=", args.platformCustomerId),
);

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

export class CustomerService {
  constructor(
    private readonly services: Services,
    private readonly signing: SignedRequests,
    private readonly apiBaseUrl: () => string,
  ) {}

  endUserTerms(): EndUserTerms {
    return {
      version: END_USER_TERMS_VERSION,
      url: `${this.apiBaseUrl()}/docs#tag/Customers/operation/getEndUserTerms`,
    };
  }

  async create(ctx: RequestContext, input: CustomerCreate): Promise<Customer> {
    checkTermsConsent(input.endUserTermsConsent);
    const now = ctx.clock.now();
    const id = newId("Customer");
    const platformCustomerId = input.platformCustomerId ?? id;
    const platform =
      input.umaAddress && input.currencies
        ? undefined
        : await this.services.data.one(platformDefaults({ platformId: ctx.platformId }));
    const currencies =
      input.currencies ??
      (platform ? supportedCurrenciesOf(platform).map((c) => c.currencyCode) : []);
    const row: CustomerRow = {
      id,
      platformId: ctx.platformId,
      customerType: input.customerType,
      platformCustomerId,
      umaAddress: input.umaAddress
        ? umaAddressOf(input.umaAddress)
        : defaultUmaAddress(platformCustomerId, platform?.umaDomain ?? ""),
      region: input.region ?? null,
      currencies: JSON.stringify(currencies),
      email: input.email ?? null,
      phoneNumber: input.phoneNumber ?? null,
      details: JSON.stringify(detailsOf(input)),
      endUserTermsConsent: input.endUserTermsConsent
        ? JSON.stringify(input.endUserTermsConsent)
        : null,
      // An individual's KYC runs at creation; a business waits for POST /verifications.
      kycStatus:
        input.customerType === "INDIVIDUAL"
          ? individualKycOutcome(input.fullName).outcome.kycStatus
          : null,
      kybStatus: input.customerType === "BUSINESS" ? "UNVERIFIED" : null,
      verifiedEmail: null,
      verifiedPhoneNumber: null,
      deletedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      // Rows that do not read each other: one statement, and on PostgreSQL
      // one round trip instead of BEGIN, the inserts and COMMIT.
      const event = statusEvent(ctx, row);
      const accounts = newAccountRows(
        { platformId: ctx.platformId, customerId: id },
        currencies,
        now,
      );
      await this.services.data.transaction(
        () =>
          insertAll([
            rowOf("Customer", row),
            ...accounts.map((account) => rowOf("InternalAccount", account)),
            ...firstCredentialRows(accounts, row.email).map((method) =>
              rowOf("AuthMethod", method),
            ),
            ...(event ? [outboxInsert(event)] : []),
          ]),
        "eachStep",
      );
      if (event) notifyEventEmitted();
    } catch (err) {
      throw await this.conflictOf(ctx, err, row);
    }
    return toCustomer(row);
  }

  /**
   * A unique index refused the write: which of the customer's unique fields
   * is taken. Both may be (a reused platformCustomerId brings its default UMA
   * address along), and a database names only the first index it checked, so
   * the platformCustomerId is looked up.
   */
  private async conflictOf(
    ctx: RequestContext,
    err: unknown,
    row: Pick<CustomerRow, "id" | "platformCustomerId" | "umaAddress">,
  ): Promise<unknown> {
    if (!isUniqueViolation(err)) return err;
    const holder = await this.services.data.one(
      customerWithPlatformId({
        platformId: ctx.platformId,
        platformCustomerId: row.platformCustomerId,
      }),
    );
    if (holder && holder.id !== row.id) {
      return new ApiError(
        409,
        "CONFLICT",
        `A customer with platformCustomerId ${row.platformCustomerId} already exists`,
      );
    }
    return new ApiError(409, "UMA_ADDRESS_EXISTS", `The UMA address ${row.umaAddress} is taken`);
  }

  async getRow(ctx: RequestContext, id: string): Promise<CustomerRow> {
    const row = await this.services.data.one(customerRow({ id, platformId: ctx.platformId }));
    if (!row) throw notFound("USER_NOT_FOUND", `Customer ${id} not found`);
    return row;
  }

  /** A customer that can still be acted on: deleted ones answer 404 to new work. */
  async getActiveRow(ctx: RequestContext, id: string): Promise<CustomerRow> {
    const row = await this.getRow(ctx, id);
    if (row.deletedAt !== null) throw notFound("USER_NOT_FOUND", `Customer ${id} was deleted`);
    return row;
  }

  /** A customer named in a request body: the live contract answers an unknown one with 400. */
  async referencedIn(ctx: RequestContext, field: string, id: string): Promise<CustomerRow> {
    return this.getActiveRow(ctx, id).catch((err: unknown) => {
      throw isNotFound(err)
        ? invalidInput(`No customer ${id}`, { errors: [fieldError(field, "no such customer")] })
        : err;
    });
  }

  async get(ctx: RequestContext, id: string): Promise<Customer> {
    return toCustomer(await this.getRow(ctx, id));
  }

  async list(
    ctx: RequestContext,
    filter: CustomerFilter,
  ): Promise<Page<Customer> & { totalCount: number }> {
    let query = q.selectFrom("Customer").where("platformId", "=", ctx.platformId);
    if (filter.customerType) query = query.where("customerType", "=", filter.customerType);
    if (filter.platformCustomerId)
      query = query.where("platformCustomerId", "=", filter.platformCustomerId);
    if (filter.umaAddress) query = query.where("umaAddress", "=", filter.umaAddress.toLowerCase());
    if (filter.region) query = query.where("region", "=", filter.region);
    // currencies is a JSON array of codes: a quoted code is one element.
    if (filter.currency) query = query.where("currencies", "like", `%"${filter.currency}"%`);
    query = query.$call(withinTimes(filter));
    if (!filter.isIncludingDeleted) query = query.where("deletedAt", "is", null);
    return newestCountedPage(this.services.data, query, filter, toCustomer);
  }

  /**
   * Changes the fields sent. A new email (phone number) of a customer whose
   * embedded wallets have EMAIL_OTP (SMS_OTP) credentials is a signed retry,
   * since it moves where those wallets' codes go: the first call answers 202,
   * the retry stamped by one of the customer's wallet sessions changes the
   * customer and every such credential together.
   */
  async update(
    ctx: RequestContext,
    id: string,
    headers: WalletHeaders,
    input: CustomerUpdate,
  ): Promise<{ status: 200; body: Customer } | { status: 202; body: ChallengeBody }> {
    if (input.email !== undefined && input.phoneNumber !== undefined) {
      throw invalidInput("Change email and phoneNumber in separate requests", {
        errors: [fieldError("body.phoneNumber", "sent together with email")],
      });
    }
    checkTermsConsent(input.endUserTermsConsent);
    const current = await this.getActiveRow(ctx, id);
    if (input.customerType !== current.customerType) {
      throw invalidInput(`Customer ${id} is ${current.customerType}, not ${input.customerType}`, {
        errors: [fieldError("body.customerType", `must be ${current.customerType}`)],
      });
    }
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
      throw await this.conflictOf(ctx, err, row);
    }
  }

  async delete(ctx: RequestContext, id: string): Promise<Customer> {
    const current = await this.getRow(ctx, id);
    const now = ctx.clock.now();
    // Only the first delete changes the row; a second one, even a concurrent
    // one, finds it already deleted.
    const changed = await this.services.data.transaction(() =>
      run(
        q
          .updateTable("Customer")
          .set({ deletedAt: now, updatedAt: now })
          .where("id", "=", id)
          .where("platformId", "=", ctx.platformId)
          .where("deletedAt", "is", null),
      ),
    );
    if (changed === 0) {
      throw new ApiError(410, "CUSTOMER_DELETED", `Customer ${id} is already deleted`);
    }
    return toCustomer({ ...current, deletedAt: now, updatedAt: now });
  }
}
