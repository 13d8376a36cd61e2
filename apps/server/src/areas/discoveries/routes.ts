import { institutionsFor } from "@payments-sandbox/sandbox-rules";
import { fieldError, invalidInput } from "../../errors.js";
import type { Handlers } from "../../http/operations.js";

// GET /discoveries: the receiving institutions of a corridor, from the
// sandbox's fixed directory (packages/sandbox-rules).

const COUNTRY = /^[A-Za-z]{2}$/;
const CURRENCY = /^[A-Za-z]{3}$/;

export function discoveryRoutes(): Handlers<"getDiscoveries"> {
  return {
    getDiscoveries: ({ query }) => {
      if (query.country !== undefined && !COUNTRY.test(query.country)) {
        throw invalidInput("country must be an ISO 3166-1 alpha-2 code, such as PH", {
          errors: [fieldError("query.country", "must be two letters")],
        });
      }
      if (query.currency !== undefined && !CURRENCY.test(query.currency)) {
        throw invalidInput("currency must be an ISO 4217 code, such as PHP", {
          errors: [fieldError("query.currency", "must be three letters")],
        });
      }
      return Promise.resolve({ status: 200, body: { data: institutionsFor(query) } });
    },
  };
}
