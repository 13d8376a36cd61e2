import type { Client } from "openapi-fetch";
import type { components, operations, paths, webhooks } from "./generated/api.js";

// The API's types by the names the package uses: a module of their own, so
// the wallet flows can use them without importing the package's entry point
// (which re-exports those flows).

export type { components, operations, paths, webhooks };
/** Every schema of openapi.yaml by name, e.g. `Schemas["AuthSession"]`. */
export type Schemas = components["schemas"];
export type SandboxClient = Client<paths>;
