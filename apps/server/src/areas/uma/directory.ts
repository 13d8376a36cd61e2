import type { UmaAddress } from "@sandbox/sandbox-rules";
import { q, type Row } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";

type CustomerRow = Row<"Customer">;
type AccountRow = Row<"InternalAccount">;

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
    return { customer, account };
  }
}
