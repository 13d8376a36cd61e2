import {
  evaluateUmaReceiver,
  type UmaAddress,
  type UmaCurrency,
} from "@payments-sandbox/sandbox-rules";
import { q, type Row } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";

type CustomerRow = Row<"Customer">;
type AccountRow = Row<"InternalAccount">;

/**
 * Who receives at a UMA address: one of the simulated receivers of the
 * sandbox UMA host (the magic values), or one of the platform's customers.
 */
export type UmaReceiver =
  | { kind: "SIMULATED"; address: UmaAddress; currency: UmaCurrency }
  | { kind: "CUSTOMER"; address: UmaAddress; customer: CustomerRow };

export interface PlatformUmaReceiver {
  customer: CustomerRow;
  /** The internal account a payment in the requested currency is credited to. */
  account: AccountRow;
}

/**
 * UMA addresses of the platform's own customers (each customer's
 * `umaAddress`). The sandbox does not run UMA discovery: an address on any
 * host other than the sandbox UMA host is one of the platform's customers or
 * no one, and a payment goes to that customer's oldest active internal
 * account in the payment currency.
 */
export class UmaDirectory {
  constructor(private readonly services: Services) {}

  /**
   * The receiver at a UMA address as given: a malformed one is 400
   * INVALID_UMA_ADDRESS, and one with no receiver 404 UMA_NOT_FOUND.
   */
  async receiver(ctx: RequestContext, input: string): Promise<UmaReceiver> {
    const { outcome, address } = evaluateUmaReceiver(input);
    if (outcome.kind === "REJECT") {
      throw new ApiError(outcome.status, outcome.errorCode, outcome.message);
    }
    if (!address) throw new Error("a well-formed UMA address has a parsed form");
    if (outcome.kind === "RECEIVER") {
      return { kind: "SIMULATED", address, currency: outcome.currency };
    }
    return { kind: "CUSTOMER", address, customer: await this.customerAt(ctx, address) };
  }

  /** The platform's customer at `address`, or 404 UMA_NOT_FOUND. */
  async customerAt(ctx: RequestContext, address: UmaAddress): Promise<CustomerRow> {
    const customer = await this.services.data.one(
      q
        .selectFrom("Customer")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("umaAddress", "=", address.address)
        .where("deletedAt", "is", null),
    );
    if (!customer) {
      throw notFound(
        "UMA_NOT_FOUND",
        `No receiver exists for ${address.address}: it is the umaAddress of none of your platform's customers`,
      );
    }
    return customer;
  }

  async resolve(
    ctx: RequestContext,
    address: UmaAddress,
    currency: string,
  ): Promise<PlatformUmaReceiver> {
    const customer = await this.customerAt(ctx, address);
    return { customer, account: await this.accountOf(ctx, customer, address, currency) };
  }

  /** The customer's account a payment in `currency` to `address` is credited to. */
  async accountOf(
    ctx: RequestContext,
    customer: CustomerRow,
    address: UmaAddress,
    currency: string,
  ): Promise<AccountRow> {
    const account = await this.services.data.one(
      q
        .selectFrom("InternalAccount")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", customer.id)
        .where("currency", "=", currency)
        .where("status", "=", "ACTIVE")
        .orderBy("createdAt")
        .orderBy("id")
        .limit(1),
    );
    if (!account) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `The receiver ${address.address} has no active internal account in ${currency}`,
      );
    }
    return account;
  }
}
