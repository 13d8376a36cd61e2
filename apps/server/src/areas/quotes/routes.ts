import { idempotent, type Handlers } from "../../http/operations.js";
import type { IdempotencyStore } from "../../http/idempotency.js";
import { walletHeaders } from "../../signing/headers.js";
import { railsOfCurrency } from "../external-accounts/account-info.js";
import type { PlatformService } from "../platform/service.js";
import { exchangeRates } from "./exchange-rates.js";
import type { QuoteService } from "./service.js";

export function quoteRoutes(
  quotes: QuoteService,
  idempotency: IdempotencyStore,
  platform: PlatformService,
): Handlers<
  | "getExchangeRates"
  | "createQuote"
  | "getQuoteById"
  | "executeQuote"
  | "authorizeQuote"
  | "resendQuoteScaCode"
> {
  return {
    getExchangeRates: async ({ query }, ctx) => ({
      status: 200,
      body: exchangeRates(ctx.clock.now(), query, await platform.currencies(ctx), railsOfCurrency),
    }),
    createQuote: idempotent(idempotency, async ({ body }, ctx) => {
      const { quote, challenged } = await quotes.create(ctx, body);
      return challenged ? { status: 202, body: quote } : { status: 201, body: quote };
    }),
    getQuoteById: async ({ params }, ctx) => ({
      status: 200,
      body: await quotes.get(ctx, params.quoteId),
    }),
    executeQuote: idempotent(idempotency, async ({ params, headers, body }, ctx) => ({
      status: 200,
      body: await quotes.execute(ctx, params.quoteId, walletHeaders(headers).signature, body),
    })),
    authorizeQuote: async ({ params, body }, ctx) => ({
      status: 200,
      body: await quotes.authorize(ctx, params.quoteId, body),
    }),
    resendQuoteScaCode: async ({ params }, ctx) => {
      await quotes.resend(ctx, params.quoteId);
      return { status: 204 };
    },
  };
}
