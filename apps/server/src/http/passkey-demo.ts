import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import express, { type Router } from "express";
import { API_BASE_PATH, type AuthConfig } from "../config.js";
import { serverRoot } from "../paths.js";
import { escapeHtml } from "./hosted-page.js";

// The sandbox-only passkey demo at /sandbox/passkey-demo: a page that
// registers a passkey of the browser and logs in with it through the typed
// client's browser bundle, served from here so that it needs no build step
// and loads nothing from elsewhere. Outside the versioned API and without
// credentials: the visitor types the platform's token into the page, which
// calls the API from the browser like any wallet app.

export const PASSKEY_DEMO_PATH = "/sandbox/passkey-demo";
const DEMO_PATH = PASSKEY_DEMO_PATH;
const pageDir = join(serverRoot, "public", "passkey-demo");

/** The demo page on the allowed origin whose host is the RP ID, if any; else on `origin`. */
export function passkeyDemoUrl(origin: string, auth: AuthConfig): string {
  const onRpId = auth.passkeyOrigins.find(
    (o) => URL.canParse(o) && new URL(o).hostname === auth.passkeyRpId,
  );
  return `${onRpId ?? origin}${PASSKEY_DEMO_PATH}`;
}

const headers = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'",
};

export function passkeyDemoRoutes(relyingPartyId: string): Router {
  const router = express.Router();
  // Read at start: the page is small and a change needs a restart anyway.
  const page = readFileSync(join(pageDir, "index.html"), "utf8")
    .replace("{{API_BASE_PATH}}", escapeHtml(API_BASE_PATH))
    .replace("{{RP_ID}}", escapeHtml(relyingPartyId));
  const bundle = fileURLToPath(import.meta.resolve("@payments-sandbox/client/browser"));

  router.get([DEMO_PATH, `${DEMO_PATH}/`], (_req, res) => {
    res.set({ ...headers, "Content-Type": "text/html; charset=utf-8" }).send(page);
  });
  router.get(`${DEMO_PATH}/demo.js`, (_req, res) => {
    res.set(headers).type("text/javascript").sendFile(join(pageDir, "demo.js"));
  });
  router.get(`${DEMO_PATH}/client.js`, (_req, res) => {
    res.set(headers).type("text/javascript").sendFile(bundle);
  });
  return router;
}
