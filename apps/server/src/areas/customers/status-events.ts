import type { SqlProgram } from "../../db/sql.js";
import { emitEvent, type EventInput } from "../../events/outbox.js";
import type { RequestContext } from "../../http/context.js";
import { toCustomer, type CustomerRow } from "./view.js";

// A customer's KYC (KYB for a business) status is announced by webhook when
// it is APPROVED, REJECTED or PENDING, with the change that set it.

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
export function statusEvent(
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
