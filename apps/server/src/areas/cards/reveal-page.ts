import { Router, type Response } from "express";
import { param } from "../../http/route-helpers.js";
import { hostedPage } from "../../http/hosted-page.js";
import type { Logger } from "../../logger.js";
import type { CardService } from "./service.js";
import type { TestCardDetails } from "./test-card-details.js";

// The page behind a reveal URL, outside the versioned API (http/hosted-page.ts),
// meant for an iframe.

export const REVEAL_PATH = "/card-reveal";

/** The token in a reveal URL is a secret: logs show the path without it. */
export function withoutRevealToken(path: string): string {
  return path.startsWith(`${REVEAL_PATH}/`) ? `${REVEAL_PATH}/[token]` : path;
}

const CARD_CSS = `  .card { max-width: 340px; border-radius: 12px; padding: 20px; background: #1f3a5f; color: #fff; }
  .pan { font: 600 1.35rem ui-monospace, monospace; letter-spacing: 0.08em; margin: 12px 0; }
  .row { display: flex; gap: 32px; }
  .label { font-size: 0.7rem; text-transform: uppercase; opacity: 0.75; }
  .value { font: 600 1rem ui-monospace, monospace; }
  .note { font-size: 0.75rem; color: #555; margin-top: 10px; max-width: 340px; }`;

function page(res: Response, status: number, title: string, body: string): void {
  hostedPage(res, status, title, body, CARD_CSS);
}

function detailsBody(details: TestCardDetails): string {
  // Only digits and "/" reach the page, so nothing needs escaping.
  const grouped = details.pan.replace(/(\d{4})(?=\d)/g, "$1 ");
  return `<div class="card">
  <div class="label">Card number</div>
  <div class="pan" id="pan">${grouped}</div>
  <div class="row">
    <div><div class="label">Expires</div><div class="value" id="expiry">${details.expiry}</div></div>
    <div><div class="label">CVV</div><div class="value" id="cvv">${details.cvv}</div></div>
  </div>
</div>
<p class="note">Sandbox test card: this number passes the Luhn check but moves no money. This link has now been used and will not show the details again.</p>`;
}

export function revealPageRoutes(cards: CardService, log: Logger): Router {
  const router = Router();
  router.get(`${REVEAL_PATH}/:token`, async (req, res) => {
    let result: Awaited<ReturnType<CardService["openReveal"]>>;
    try {
      result = await cards.openReveal(param(req, "token"));
    } catch (err) {
      // An HTML answer for the iframe, and a log line without the token.
      log.error({ err, path: withoutRevealToken(req.path) }, "card reveal page failed");
      page(
        res,
        500,
        "Something went wrong",
        `<div class="error"><h1>The card details could not be shown</h1><p>Please try again with a new link.</p></div>`,
      );
      return;
    }
    switch (result.kind) {
      case "SHOWN":
        page(res, 200, `Card ending ${result.last4}`, detailsBody(result.details));
        return;
      case "GONE":
        page(
          res,
          410,
          "Link expired",
          `<div class="error"><h1>This link has expired</h1><p>Card details links work once and only for a few minutes. Ask for a new one (POST /cards/{id}/reveal) and open it right away.</p></div>`,
        );
        return;
      case "UNKNOWN":
        page(
          res,
          404,
          "Link not found",
          `<div class="error"><h1>This link is not valid</h1><p>No card details exist at this address. Check that the whole link was copied, or ask for a new one.</p></div>`,
        );
        return;
    }
  });
  return router;
}
