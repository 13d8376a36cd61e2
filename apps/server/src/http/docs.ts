import { existsSync, readFileSync } from "node:fs";
import express, { type Router } from "express";
import { GENERATED_HEADER, renderMagicValuesMarkdown } from "@payments-sandbox/sandbox-rules";
import { docsDistPath, docsReferencePath, openApiPath } from "../paths.js";

// The API reference at /docs and the spec it renders, at /openapi.yaml. The
// page loads only from this server (its script and Redoc's bundle under
// /docs/, the spec from /openapi.yaml), so it works offline. The served spec
// names this sandbox's own base URL as its server, known only once the server
// listens: the reference then shows, and code generated from the spec calls,
// the sandbox that served it rather than the file's default.
//
// The magic-value tables are served beside it, at /docs/magic-values, by the
// same page and Redoc: as a document without operations whose description is
// the tables' markdown, rendered from the tables the sandbox evaluates.

const SERVER_DESCRIPTION = "This sandbox";

/**
 * The spec text with its top-level `servers` replaced by one entry for
 * `baseUrl`, and everything else as written. A top-level key starts at column
 * 0 and its value runs until the next line that does (blank lines go with it).
 */
export function withServer(spec: string, baseUrl: string): string {
  // A JSON string is a valid YAML double-quoted scalar, whatever the URL holds.
  const block = `servers:\n  - url: ${JSON.stringify(baseUrl)}\n    description: ${SERVER_DESCRIPTION}\n`;
  const existing = /^servers:.*\n(?:[ \t].*\n|\n)*/m;
  if (existing.test(spec)) return spec.replace(existing, () => block);
  return `${spec.endsWith("\n") ? spec : `${spec}\n`}${block}`;
}

/** The magic-value tables as a document Redoc renders (its headings make the sidebar). */
export function magicValuesDocument(): Record<string, unknown> {
  const markdown = renderMagicValuesMarkdown();
  const body = markdown.startsWith(GENERATED_HEADER)
    ? markdown.slice(GENERATED_HEADER.length)
    : markdown;
  // The page's title is the document's; its first heading would repeat it.
  const description = body.replace(/^\s*# [^\n]*\n/, "").trimStart();
  return {
    openapi: "3.1.0",
    info: { title: "Sandbox magic values", version: "sandbox", description },
    paths: {},
  };
}

export function docsRoutes(apiBaseUrl: () => string): Router {
  const router = express.Router();
  let served: { baseUrl: string; text: string } | undefined;
  router.get("/openapi.yaml", (_req, res) => {
    const baseUrl = apiBaseUrl();
    if (served?.baseUrl !== baseUrl) {
      served = { baseUrl, text: withServer(readFileSync(openApiPath, "utf8"), baseUrl) };
    }
    res.type("application/yaml").send(served.text);
  });
  let magicValues: string | undefined;
  router.get("/docs/magic-values.json", (_req, res) => {
    magicValues ??= JSON.stringify(magicValuesDocument());
    res.type("application/json").send(magicValues);
  });
  router.get(["/docs", "/docs/", "/docs/magic-values"], (_req, res) => {
    if (!existsSync(docsReferencePath)) {
      res.status(503).type("text/plain").send("API reference not built yet: run `npm run build`.");
      return;
    }
    res.sendFile(docsReferencePath);
  });
  router.use("/docs", express.static(docsDistPath, { index: false }));
  return router;
}
