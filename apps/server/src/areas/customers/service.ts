import type { Schemas } from "@payments-sandbox/client";
import { individualKycOutcome } from "@payments-sandbox/sandbox-rules";
import { insertAll, prepared, q, rowOf, run } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, isNotFound, notFound } from "../../errors.js";
import { notifyEventEmitted, outboxInsert } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { Query } from "../../http/operation-types.js";
import { type Page, newestCountedPage, withinTimes } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import { firstCredentialRows, newAccountRows } from "../internal-accounts/opening.js";
import { supportedCurrenciesOf } from "../platform/service.js";
import type { WalletHeaders } from "../../signing/headers.js";
import type { ChallengeBody, SignedRequests } from "../../signing/signed-requests.js";
import { conflictOf } from "./conflicts.js";
import {
  checkTermsConsent,
  defaultUmaAddress,
  END_USER_TERMS_VERSION,
  umaAddressOf,
} from "./input-checks.js";
import { statusEvent } from "./status-events.js";
import { CustomerUpdates, type CustomerUpdate } from "./updates.js";
import { detailsOf, toCustomer, type Customer, type CustomerRow } from "./view.js";

export { END_USER_TERMS_VERSION };
export { emitStatusEvent, statusEventType } from "./status-events.js";
export { currenciesOf, toCustomer } from "./view.js";
export type { Customer, CustomerRow, CustomerUpdate };
export type CustomerCreate = Schemas["CustomerCreateRequestOneOf"];
export type EndUserTerms = Schemas["EndUserTerms"];

/** The query of listCustomers, as validated. */
export type CustomerFilter = Query<"listCustomers">;

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

/**
 * A platform's customers: created with their accounts, read, changed and
 * deleted. Their API view is view.ts, their status webhooks
 * status-events.ts, and a change to their contact details updates.ts.
 */
export class CustomerService {
  private readonly updates: CustomerUpdates;

  constructor(
    private readonly services: Services,
    signing: SignedRequests,
    private readonly apiBaseUrl: () => string,
  ) {
    this.updates = new CustomerUpdates(services, signing);
  }

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
      throw await conflictOf(this.services, ctx, err, row);
    }
    return toCustomer(row);
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
   * Changes the fields sent, once the request is checked against the
   * customer; a new email or phone number may need a signed retry (updates.ts).
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
    return this.updates.apply(ctx, current, headers, input);
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
