import { readFileSync } from "node:fs";
import type { Response } from "express";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors.js";
import { openApiPath } from "../paths.js";
import type { RequestContext } from "./context.js";
import type { ApiDocument } from "./operation-router.js";
import { checkPermission, permissionRuleOf, permissionRules } from "./permissions.js";

const doc = parse(readFileSync(openApiPath, "utf8")) as ApiDocument;

/** A response whose locals carry the caller, as the authenticator leaves it. */
function withCaller(permissions?: RequestContext["permissions"], agent = false): Response {
  const caller: RequestContext = {
    platformId: "Platform:1",
    tokenId: "t",
    ...(permissions ? { permissions } : {}),
    ...(agent
      ? {
          agent: {
            agentId: "Agent:1",
            customerId: "Customer:1",
            isPaused: false,
            policy: {
              permissions: [],
              defaultExecutionMode: "AUTO" as const,
              spendingLimits: { currency: "USD", perTransactionLimit: 1 },
            },
          },
        }
      : {}),
    clock: { now: () => new Date() },
    log: {} as RequestContext["log"],
  };
  return { locals: { caller } } as unknown as Response;
}

/** What checkPermission throws, or undefined when it lets the caller through. */
function refusalOf(...args: Parameters<typeof checkPermission>): unknown {
  try {
    checkPermission(...args);
    return undefined;
  } catch (err) {
    return err;
  }
}

describe("permissionRules", () => {
  it("compiles a rule for every operation of openapi.yaml that API tokens call", () => {
    const rules = permissionRules(doc, Object.keys(doc.paths));
    expect(rules.get("/transfer-out")?.get("POST")).toEqual({
      permission: "TRANSACT",
      refusal: 401,
    });
    expect(rules.get("/quotes")?.get("POST")).toEqual({ permission: "TRANSACT", refusal: 403 });
    expect(rules.get("/tokens")?.get("GET")).toEqual({ permission: "VIEW", refusal: 401 });
    expect(rules.get("/config")?.get("PATCH")).toEqual({ permission: "MANAGE", refusal: 401 });
    // Agents' own operations, and those without credentials: no API token rule.
    expect(rules.get("/agents/me/transfer-out")?.get("POST")).toBeUndefined();
    expect(rules.get("/agents/device-codes/{code}/redeem")?.get("POST")).toBeUndefined();
  });

  const operation = (extra: Record<string, unknown>) => ({
    operationId: "op",
    responses: { "200": {}, "401": {} },
    ...extra,
  });

  it("refuses to start with an operation whose x-permission is missing or does not fit it", () => {
    expect(() => permissionRuleOf(doc, operation({}))).toThrow(/op: x-permission must be/);
    expect(() => permissionRuleOf(doc, operation({ "x-permission": "ADMIN" }))).toThrow(
      /must be one of VIEW, TRANSACT, MANAGE, NONE/,
    );
    // BasicAuth (here the document's default security) needs a permission.
    expect(() => permissionRuleOf(doc, operation({ "x-permission": "NONE" }))).toThrow(
      /cannot be NONE/,
    );
    for (const security of [[], [{ AgentAuth: [] }]]) {
      expect(() => permissionRuleOf(doc, operation({ "x-permission": "VIEW", security }))).toThrow(
        /must be NONE/,
      );
      expect(permissionRuleOf(doc, operation({ "x-permission": "NONE", security }))).toBe(
        undefined,
      );
    }
    expect(() =>
      permissionRuleOf(doc, { operationId: "op", "x-permission": "VIEW", responses: {} }),
    ).toThrow(/declares neither 403 nor 401/);
  });

  it("refuses with the operation's 403 where it declares one, else its 401", () => {
    expect(permissionRuleOf(doc, operation({ "x-permission": "MANAGE" }))).toEqual({
      permission: "MANAGE",
      refusal: 401,
    });
    const with403 = operation({ "x-permission": "VIEW", responses: { "401": {}, "403": {} } });
    expect(permissionRuleOf(doc, with403)).toEqual({ permission: "VIEW", refusal: 403 });
  });
});

describe("checkPermission", () => {
  const transact = { permission: "TRANSACT", refusal: 403 } as const;
  const manage = { permission: "MANAGE", refusal: 401 } as const;

  it("lets a token with the permission through, and refuses one without, naming it", () => {
    expect(refusalOf(transact, withCaller(["VIEW", "TRANSACT"]))).toBeUndefined();
    expect(refusalOf(undefined, withCaller([]))).toBeUndefined();
    const forbidden = refusalOf(transact, withCaller(["VIEW", "MANAGE"]));
    expect(forbidden).toBeInstanceOf(ApiError);
    expect((forbidden as ApiError).toBody()).toEqual({
      status: 403,
      code: "FORBIDDEN",
      message: "This API token does not have the TRANSACT permission this operation needs.",
      reason: "Missing permission: TRANSACT",
      details: { permission: "TRANSACT" },
    });
    const unauthorized = refusalOf(manage, withCaller(["VIEW", "TRANSACT"]));
    expect(unauthorized).toMatchObject({
      status: 401,
      code: "UNAUTHORIZED",
      reason: "Missing permission: MANAGE",
    });
  });

  it("fails closed for a token with no permissions, and leaves agents to their policy", () => {
    expect(refusalOf(transact, withCaller())).toBeInstanceOf(ApiError);
    expect(refusalOf(transact, withCaller(undefined, true))).toBeUndefined();
  });
});
