import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// src/ and dist/ sit at the same depth, so these hold for both.
export const serverRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = join(serverRoot, "..", "..");
export const openApiPath = join(repoRoot, "openapi.yaml");
/** The built API reference: its page, script and Redoc's bundle. */
export const docsDistPath = join(repoRoot, "docs", "dist");
export const docsReferencePath = join(docsDistPath, "reference.html");
