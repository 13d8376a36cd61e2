/**
 * A customer's SCA factors as the operations read them: which it can
 * authenticate with now, and how a factor is shown. `SMS_OTP` is the verified
 * phone number (no row); `TOTP` and `PASSKEY` are ACTIVE ScaFactor rows.
 */
import type { Schemas } from "@payments-sandbox/client";
import type { Database } from "../../db/database.js";
import { q, type Row } from "../../db/query.js";
import { fieldError, invalidInput } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";
import { channelStatus } from "../customers/contact-channels.js";
import type { CustomerRow } from "../customers/service.js";
import type { ScaPasskey } from "./passkeys.js";

export type ScaFactor = Schemas["ScaFactor"];
export type FactorRow = Row<"ScaFactor">;

export const passkeyOf = (row: FactorRow): ScaPasskey => ({
  credentialId: row.credentialId ?? "",
  publicKey: row.publicKey ?? "",
  counter: row.counter,
  transports: row.transports ? (JSON.parse(row.transports) as string[]) : [],
});

export function factorView(row: FactorRow): Schemas["ScaFactorView"] {
  return {
    factor: row.factor as ScaFactor,
    ...(row.credentialId !== null ? { credentialId: row.credentialId } : {}),
    ...(row.name !== null ? { name: row.name } : {}),
  };
}

export function activeFactors(
  data: Database,
  ctx: RequestContext,
  customerId: string,
  factor?: ScaFactor,
) {
  let query = q
    .selectFrom("ScaFactor")
    .selectAll()
    .where("platformId", "=", ctx.platformId)
    .where("customerId", "=", customerId)
    .where("status", "=", "ACTIVE");
  if (factor) query = query.where("factor", "=", factor);
  return data.all(query.orderBy("createdAt").orderBy("id"));
}

/** Whether the customer can authenticate with this factor now. */
export async function hasFactor(
  data: Database,
  ctx: RequestContext,
  row: CustomerRow,
  factor: ScaFactor,
) {
  if (factor === "SMS_OTP") return channelStatus(row, "PHONE") === "VERIFIED";
  return (await activeFactors(data, ctx, row.id, factor)).length > 0;
}

export async function requireFactor(
  data: Database,
  ctx: RequestContext,
  row: CustomerRow,
  factor: ScaFactor,
) {
  if (!(await hasFactor(data, ctx, row, factor))) {
    throw invalidInput(
      factor === "SMS_OTP"
        ? `Customer ${row.id} has no verified phone number for SMS_OTP; verify it with POST /customers/${row.id}/verify-phone`
        : `Customer ${row.id} has no enrolled ${factor} factor; enrol one with POST /sca/factors`,
      { errors: [fieldError("body.factor", "not a factor of this customer")] },
    );
  }
}

/** GET /sca/factors */
export async function listFactors(
  data: Database,
  ctx: RequestContext,
  row: CustomerRow,
): Promise<Schemas["ScaFactorList"]> {
  const factors = (await activeFactors(data, ctx, row.id)).map(factorView);
  return {
    factors: [
      ...(channelStatus(row, "PHONE") === "VERIFIED" ? [{ factor: "SMS_OTP" as const }] : []),
      ...factors,
    ],
  };
}
