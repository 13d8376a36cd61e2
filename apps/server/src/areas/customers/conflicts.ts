import { isUniqueViolation } from "../../db/errors.js";
import { prepared, q } from "../../db/query.js";
import { ApiError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { CustomerRow } from "./view.js";

const customerWithPlatformId = prepared(
  (args: { platformId: string; platformCustomerId: string }) =>
    q
      .selectFrom("Customer")
      .select("id")
      .where("platformId", "=", args.platformId)
      .where("platformCustomerId", "=", args.platformCustomerId),
);

/**
 * A unique index refused the write: which of the customer's unique fields
 * is taken. Both may be (a reused platformCustomerId brings its default UMA
 * address along), and a database names only the first index it checked, so
 * the platformCustomerId is looked up. Any other error is returned as it is.
 */
export async function conflictOf(
  services: Services,
  ctx: RequestContext,
  err: unknown,
  row: Pick<CustomerRow, "id" | "platformCustomerId" | "umaAddress">,
): Promise<unknown> {
  if (!isUniqueViolation(err)) return err;
  const holder = await services.data.one(
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
