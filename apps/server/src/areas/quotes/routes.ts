import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { idempotentRoute, type IdempotencyStore } from "../../http/idempotency.js";
import { param, query } from "../../http/route-helpers.js";
import { exchangeRates } from "./exchange-rates.js";
import type { QuoteCreate, QuoteService } from "./service.js";

export function quoteRoutes(quotes: QuoteService, idempotency: IdempotencyStore): OperationRoutes {
  const router = new OperationRoutes();
  router.get("/exchange-rates", (req, res) => {
    const filter = query<{ sourceCurrency?: string; destinationCurrency?: string }>(req);
    res.json(exchangeRates(contextOf(res).clock.now(), filter));
  });
  router.post("/quotes", async (req, res) => {
    res.status(201).json(await quotes.create(contextOf(res), bodyOf<QuoteCreate>(req)));
  });
  router.get("/quotes/:quoteId", async (req, res) => {
    res.json(await quotes.get(contextOf(res), param(req, "quoteId")));
  });
  router.post(
    "/quotes/:quoteId/execute",
    idempotentRoute(idempotency, "executeQuote", async (req, res) => {
      const result = await quotes.execute(contextOf(res), param(req, "quoteId"), {
        signature: req.header("Service-Wallet-Signature"),
        requestId: req.header("Request-Id"),
      });
      // A signed-retry challenge is not the operation's result: the key stays free for the retry.
      return result.kind === "CHALLENGE"
        ? { status: 202, body: result.challenge, final: false }
        : { status: 200, body: result.quote };
    }),
  );
  return router;
}
