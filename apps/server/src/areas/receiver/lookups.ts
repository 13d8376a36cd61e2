import type { Schemas } from "@payments-sandbox/client";
import type { Database } from "../../db/database.js";
import { q, type Row } from "../../db/query.js";
import { fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";

// A quote may name the receiver lookup it follows (`lookupId`): the lookup
// must be this platform's, and of the quote's own destination.

type Destination = Schemas["QuoteRequest"]["destination"];

/** The recorded lookup a request names; 404 LOOKUP_REQUEST_NOT_FOUND when this platform has none. */
async function namedLookup(
  data: Database,
  ctx: RequestContext,
  id: string,
): Promise<Row<"LookupRequest">> {
  const row = await data.one(
    q
      .selectFrom("LookupRequest")
      .selectAll()
      .where("id", "=", id)
      .where("platformId", "=", ctx.platformId),
  );
  if (!row) {
    throw notFound(
      "LOOKUP_REQUEST_NOT_FOUND",
      `No receiver lookup ${id}: look the receiver up first (GET /receiver/uma/{receiverUmaAddress} or GET /receiver/external-account/{accountId}) and quote with the lookupId it answers`,
    );
  }
  return row;
}

/** Refuses a lookupId that is not a lookup of `destination` (400, naming the field). */
export async function requireLookupOf(
  data: Database,
  ctx: RequestContext,
  lookupId: string,
  destination: Destination,
): Promise<void> {
  const lookup = await namedLookup(data, ctx, lookupId);
  const matches =
    destination.destinationType === "UMA_ADDRESS"
      ? lookup.kind === "UMA_ADDRESS" && lookup.target === destination.umaAddress.toLowerCase()
      : lookup.kind === "EXTERNAL_ACCOUNT" && lookup.target === destination.accountId;
  if (!matches) {
    throw invalidInput(
      `Lookup ${lookupId} was of ${lookup.target}, not of this quote's destination`,
      {
        errors: [fieldError("body.lookupId", "a lookup of another receiver")],
      },
    );
  }
}
