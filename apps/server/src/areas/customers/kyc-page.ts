import express, { Router, type Response } from "express";
import { escapeHtml, hostedPage } from "../../http/hosted-page.js";
import { param } from "../../http/route-helpers.js";
import type { Logger } from "../../logger.js";
import { KYC_LINK_PATH, type KycLinkService } from "./kyc-links.js";

// The sandbox's hosted KYC/KYB page behind a kycUrl (kyc-links.ts): a form
// with the one value that decides the outcome, its answer, and the redirect
// to the platform's redirectUri when it gave one.

/** The token in a KYC link is a secret: logs show the path without it. */
export function withoutKycLinkToken(path: string): string {
  return path.startsWith(`${KYC_LINK_PATH}/`) ? `${KYC_LINK_PATH}/[token]` : path;
}

const CSS = `  form, .done { max-width: 360px; }
  label { display: block; font-weight: 600; margin-bottom: 6px; }
  input { width: 100%; box-sizing: border-box; padding: 8px; font-size: 1rem; }
  button { margin-top: 12px; padding: 8px 16px; font-size: 1rem; }
  .note { font-size: 0.8rem; color: #555; }`;

const FIELD = {
  INDIVIDUAL: {
    label: "Full legal name",
    hint: "Sam Lee001 stays PENDING, Ana Souza 002 is REJECTED, Kim Park003 is UNVERIFIED; any other name is APPROVED.",
  },
  BUSINESS: {
    label: "Company registration number",
    hint: "A number ending in 001 stays PENDING, 002 is REJECTED; any other is APPROVED.",
  },
} as const;

function gone(res: Response): void {
  hostedPage(
    res,
    410,
    "Link expired",
    `<div class="error"><h1>This link can no longer be used</h1><p>A verification link works once, for an hour. Ask for a new one (POST /customers/{customerId}/kyc-link).</p></div>`,
    CSS,
  );
}

function unknown(res: Response): void {
  hostedPage(
    res,
    404,
    "Link not found",
    `<div class="error"><h1>This link is not valid</h1><p>Check that the whole link was copied, or ask for a new one.</p></div>`,
    CSS,
  );
}

export function kycPageRoutes(links: KycLinkService, log: Logger): Router {
  const router = Router();
  const failed = (res: Response, path: string, err: unknown) => {
    log.error({ err, path: withoutKycLinkToken(path) }, "KYC link page failed");
    hostedPage(
      res,
      500,
      "Something went wrong",
      `<div class="error"><h1>Something went wrong</h1><p>Please try again.</p></div>`,
      CSS,
    );
  };

  router.get(`${KYC_LINK_PATH}/:token`, async (req, res) => {
    try {
      const page = await links.open(param(req, "token"));
      if (page.kind === "GONE") return gone(res);
      if (page.kind === "UNKNOWN") return unknown(res);
      const field = FIELD[page.customerType];
      hostedPage(
        res,
        200,
        "Verify your identity",
        `<form method="post">
  <h1>Verify your identity</h1>
  <label for="value">${field.label}</label>
  <input id="value" name="value" required maxlength="200" autocomplete="off">
  <button type="submit">Submit</button>
  <p class="note">Sandbox verification: nothing is checked but the value entered. ${field.hint}</p>
</form>`,
        CSS,
      );
    } catch (err) {
      failed(res, req.path, err);
    }
  });

  router.post(
    `${KYC_LINK_PATH}/:token`,
    express.urlencoded({ extended: false, limit: "4kb" }),
    async (req, res) => {
      try {
        const value = (req.body as Record<string, unknown> | undefined)?.value;
        const result = await links.submit(
          param(req, "token"),
          typeof value === "string" ? value : "",
        );
        if (result.kind === "GONE") return gone(res);
        if (result.kind === "UNKNOWN") return unknown(res);
        if (result.redirectUri !== null) {
          res.redirect(303, result.redirectUri);
          return;
        }
        const what = result.customerType === "BUSINESS" ? "kybStatus" : "kycStatus";
        hostedPage(
          res,
          200,
          "Verification submitted",
          `<div class="done"><h1>Verification submitted</h1><p>The customer's ${what} is now <strong id="status">${escapeHtml(result.status)}</strong>. You can close this page.</p></div>`,
          CSS,
        );
      } catch (err) {
        failed(res, req.path, err);
      }
    },
  );
  return router;
}
