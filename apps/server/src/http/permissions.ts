import type { Response } from "express";
import { ApiError } from "../errors.js";
import { ALL_PERMISSIONS, type Permission } from "../platform/api-tokens.js";
import type { RequestContext } from "./context.js";
import type { ApiDocument } from "./api-document.js";

// Which API token may call which operation is declared once, in openapi.yaml:
// every operation's `x-permission` names the Permission a token needs (or
// NONE, where no API token is accepted: operations without security, and the
// agent-scoped ones, whose policy decides instead). The operation router
// compiles it from the document it routes by, with the operation, and checks
// it as soon as a request is matched to its operation: before the request is
// validated or its upload read, before any handler writes, and before an
// Idempotency-Key is looked at (a stored answer is never replayed to a token
// that may not make the request).
//
// A refusal uses the status the operation declares: 403 FORBIDDEN where it
// has one, else 401 UNAUTHORIZED (the credentials are what falls short). Its
// `reason` and `details.permission` name the missing permission.

/** What `x-permission` may say. */
export const OPERATION_PERMISSIONS = [...ALL_PERMISSIONS, "NONE"] as const;
export type OperationPermission = (typeof OPERATION_PERMISSIONS)[number];

/** What an API token needs to call one operation, and how it is refused without it. */
export interface PermissionRule {
  permission: Permission;
  refusal: 401 | 403;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

type Json = ApiDocument["paths"][string][string];

interface OperationLike {
  operationId?: string;
  "x-permission"?: unknown;
  security?: Record<string, unknown>[];
  responses?: Record<string, unknown>;
}

/**
 * The rule of one operation, from its `x-permission`; undefined for NONE.
 * Throws when the declaration does not fit the operation, so a server never
 * starts with an operation that a token could call unchecked: every
 * operation has one, NONE exactly where BasicAuth is not accepted, and a
 * refusal status the operation declares.
 */
export function permissionRuleOf(
  doc: ApiDocument,
  operation: OperationLike,
): PermissionRule | undefined {
  const name = operation.operationId ?? "an operation";
  const declared = operation["x-permission"];
  if (!OPERATION_PERMISSIONS.includes(declared as OperationPermission)) {
    throw new Error(
      `${name}: x-permission must be one of ${OPERATION_PERMISSIONS.join(", ")}, not ${String(declared)}`,
    );
  }
  const security = operation.security ?? (doc.security as OperationLike["security"]) ?? [];
  const acceptsTokens = security.some((requirement) => "BasicAuth" in requirement);
  if (declared === "NONE") {
    if (acceptsTokens)
      throw new Error(`${name}: accepts API tokens, so x-permission cannot be NONE`);
    return undefined;
  }
  if (!acceptsTokens)
    throw new Error(`${name}: accepts no API token, so x-permission must be NONE`);
  const statuses = Object.keys(operation.responses ?? {});
  const refusal = statuses.includes("403") ? 403 : 401;
  if (!statuses.includes(String(refusal))) {
    throw new Error(`${name}: declares neither 403 nor 401 to refuse a token with`);
  }
  return { permission: declared as Permission, refusal };
}

/**
 * Every operation's rule, by path and then upper-case method, for the paths
 * given; operations with NONE have none. Throws as permissionRuleOf does.
 */
export function permissionRules(
  doc: ApiDocument,
  paths: readonly string[],
): Map<string, Map<string, PermissionRule>> {
  const rules = new Map<string, Map<string, PermissionRule>>();
  for (const path of paths) {
    const byMethod = new Map<string, PermissionRule>();
    for (const method of METHODS) {
      const operation = doc.paths[path]![method];
      if (!isObject(operation)) continue;
      const rule = permissionRuleOf(doc, operation as OperationLike);
      if (rule) byMethod.set(method.toUpperCase(), rule);
    }
    rules.set(path, byMethod);
  }
  return rules;
}

/** The refusal of a token that lacks `permission`, answered with `status`. */
export function missingPermission(
  permission: Permission,
  status: 401 | 403,
  message = `This API token does not have the ${permission} permission this operation needs.`,
): ApiError {
  return new ApiError(status, status === 403 ? "FORBIDDEN" : "UNAUTHORIZED", message, {
    reason: `Missing permission: ${permission}`,
    details: { permission },
  });
}

/**
 * Throws the operation's refusal when the caller is an API token without the
 * permission `rule` names. Agents are left to their policy (and to the
 * operation's `security`, which the validator applies); a request without a
 * caller reached an operation that needs none.
 */
export function checkPermission(rule: PermissionRule | undefined, res: Response): void {
  const caller = res.locals.caller as RequestContext | undefined;
  if (rule === undefined || caller === undefined || caller.agent !== undefined) return;
  if (caller.permissions?.includes(rule.permission)) return;
  throw missingPermission(rule.permission, rule.refusal);
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
