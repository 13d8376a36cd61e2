import { ApiError } from "../errors.js";
import type { Permission } from "../platform/api-tokens.js";
import type { RequestContext } from "./context.js";
import type { OperationId } from "./operation-types.js";

// Which operations an API token may call is decided here, in one table, and
// checked by the dispatcher before the handler runs (and before an
// Idempotency-Key is looked at, so a stored answer is never replayed to a
// token that may not make the request).
//
// The table holds what the live contract states: creating and executing a
// quote need TRANSACT (their descriptions and 403 answers say so), and
// managing API tokens needs MANAGE (the Permission enum's description).
// A refusal uses the status the operation declares: 403 FORBIDDEN where it
// has one, else 401 UNAUTHORIZED (the credentials are what falls short):
// the live token operations declare no 403, and without the check a token
// lacking MANAGE could create itself a TRANSACT token. VIEW, and MANAGE on
// configuration and customers, are not checked: the live contract declares
// no refusal for them. Every status listed is declared by its operation in
// openapi.yaml (a test checks it). Agents (AgentAuth) are bound by their own
// policy instead, checked by their services.

interface Requirement {
  permission: Permission;
  refusal: 401 | 403;
}

/** The permission an API token needs to call each operation; any other needs none. */
export const REQUIRED_PERMISSION = {
  createQuote: { permission: "TRANSACT", refusal: 403 },
  executeQuote: { permission: "TRANSACT", refusal: 403 },
  createToken: { permission: "MANAGE", refusal: 401 },
  deleteTokenById: { permission: "MANAGE", refusal: 401 },
  // Sandbox only: isolated platforms, which also need the sandbox's own platform.
  createSandboxPlatform: { permission: "MANAGE", refusal: 403 },
  deleteSandboxPlatform: { permission: "MANAGE", refusal: 403 },
} as const satisfies Partial<Record<OperationId, Requirement>>;

const required: Partial<Record<string, Requirement>> = REQUIRED_PERMISSION;

/** Throws the operation's refusal when the caller's API token lacks its permission. */
export function checkPermission(operationId: string, ctx: RequestContext): void {
  const requirement = required[operationId];
  if (requirement === undefined || ctx.agent !== undefined) return;
  const { permission, refusal } = requirement;
  if (ctx.permissions?.includes(permission)) return;
  throw new ApiError(
    refusal,
    refusal === 403 ? "FORBIDDEN" : "UNAUTHORIZED",
    `This API token does not have the ${permission} permission this operation needs`,
  );
}
