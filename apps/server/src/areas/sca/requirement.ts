/**
 * Who uses strong customer authentication. The live contract applies SCA
 * only to customers whose provider requires it (the EU); the sandbox's
 * simulated provider requires it of customers whose `region` is in
 * SCA_REGIONS (the European Economic Area), the same rule contact
 * verification and quote challenges use. Seed rule 10: every SCA operation
 * answers any other customer (and a beneficiary with no customer) 409
 * `CONFLICT`, the live contract's code for "SCA is not required".
 *
 * A payment needs a per-payment challenge when its customer uses SCA and its
 * destination is not a trusted beneficiary of that customer.
 */
import { SCA_REGIONS } from "@payments-sandbox/sandbox-rules";
import type { Database } from "../../db/database.js";
import { q, type Row } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";

/** Whether the customer's provider requires strong customer authentication. */
export function requiresSca(row: Pick<Row<"Customer">, "region">): boolean {
  return row.region !== null && SCA_REGIONS.has(row.region);
}

/** Seed rule 10's answer for a customer that does not use SCA. */
export function scaNotRequired(row: Pick<Row<"Customer">, "id" | "region">): ApiError {
  return new ApiError(
    409,
    "CONFLICT",
    `Customer ${row.id} does not use strong customer authentication (region ${row.region ?? "not set"})`,
  );
}

/**
 * Whether a payment of the customer (404 for another platform's) to this
 * destination must be authorized by a challenge: the customer uses SCA and
 * the destination is not one of its trusted beneficiaries.
 */
export async function paymentNeedsSca(
  data: Database,
  ctx: RequestContext,
  customerId: string | null,
  destinationExternalAccountId: string | null,
): Promise<boolean> {
  if (customerId === null) return false;
  const customer = await data.one(
    q
      .selectFrom("Customer")
      .select("region")
      .where("id", "=", customerId)
      .where("platformId", "=", ctx.platformId),
  );
  if (!customer) throw notFound("USER_NOT_FOUND", `Customer ${customerId} not found`);
  if (!requiresSca(customer)) return false;
  if (destinationExternalAccountId === null) return true;
  const trusted = await data.one(
    q
      .selectFrom("ExternalAccount")
      .select("id")
      .where("id", "=", destinationExternalAccountId)
      .where("platformId", "=", ctx.platformId)
      .where("customerId", "=", customerId)
      .where("scaTrustedAt", "is not", null),
  );
  return trusted === undefined;
}
