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
// managing API tokens needs MANAGE (the Permission enum's description; the
// sandbox adds the 403 the live contract leaves out, since without it a token
// lacking MANAGE could create itself a TRANSACT token). VIEW, and MANAGE on
// configuration and customers, are not checked: the live contract declares no
// 403 on those operations. Every operation listed must declare a 403 in
// openapi.yaml (a test checks it). Agents (AgentAuth) are bound by their own
// policy instead, checked by their services.

/** The permission an API token needs to call each operation; any other needs none. */
export const REQUIRED_PERMISSION = {
  createQuote: "TRANSACT",
  executeQuote: "TRANSACT",
  createToken: "MANAGE",
  deleteTokenById: "MANAGE",
  // Sandbox only: isolated platforms, which also need the sandbox's own platform.
  createSandboxPlatform: "MANAGE",
  deleteSandboxPlatform: "MANAGE",
} as const satisfies Partial<Record<OperationId, Permission>>;

const required: Partial<Record<string, Permission>> = REQUIRED_PERMISSION;

/** Throws 403 FORBIDDEN when the caller's API token lacks the operation's permission. */
export function checkPermission(operationId: string, ctx: RequestContext): void {
  const permission = required[operationId];
  if (permission === undefined || ctx.agent !== undefined) return;
  if (ctx.permissions?.includes(permission)) return;
  throw new ApiError(
    403,
    "FORBIDDEN",
    `This API token does not have the ${permission} permission this operation needs`,
  );
}
