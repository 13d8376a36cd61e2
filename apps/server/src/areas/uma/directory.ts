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
 * UMA addresses of the platform's own customers. The sandbox does not run
 * UMA discovery: on any host other than the sandbox UMA host, the username of
 * `$username@host` is a customer's `platformCustomerId` (UMA addresses are
 * lower case, so only lower-case ids are reachable), and the payment goes to
 * that customer's oldest active internal account in the payment currency.
 */
export class UmaDirectory {
  constructor(private readonly services: Services) {}

  async resolve(
    ctx: RequestContext,
    address: UmaAddress,
    currency: string,
  ): Promise<PlatformUmaReceiver> {
    const customer = await this.services.data.one(
      q
        .selectFrom("Customer")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("platformCustomerId", "=", address.username),
    );
    if (!customer) {
      throw notFound(
        "UMA_NOT_FOUND",
        `No receiver exists for ${address.address}: no customer of your platform has platformCustomerId ${address.username}`,
      );
    }
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
