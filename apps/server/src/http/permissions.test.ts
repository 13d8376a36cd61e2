import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors.js";
import { openApiPath } from "../paths.js";
import type { RequestContext } from "./context.js";
import { checkPermission, REQUIRED_PERMISSION } from "./permissions.js";

interface Operation {
  operationId?: string;
  responses?: Record<string, unknown>;
  security?: Record<string, unknown>[];
}
const doc = parse(readFileSync(openApiPath, "utf8")) as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));

function caller(permissions?: RequestContext["permissions"], agent = false): RequestContext {
  return {
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
}

/** What checkPermission throws for this caller, or undefined when it lets it through. */
function refusalOf(operationId: string, ctx: RequestContext): unknown {
  try {
    checkPermission(operationId, ctx);
    return undefined;
  } catch (err) {
    return err;
  }
}

describe("REQUIRED_PERMISSION", () => {
  it("names only BasicAuth operations of openapi.yaml that declare the refusal they answer", () => {
    for (const [operationId, { refusal }] of Object.entries(REQUIRED_PERMISSION)) {
      const operation = operations.find((op) => op.operationId === operationId);
      expect(operation, operationId).toBeDefined();
      expect(Object.keys(operation!.responses ?? {}), operationId).toContain(String(refusal));
      // 401 only where the operation has no 403 to answer with.
      if (refusal === 401) expect(Object.keys(operation!.responses ?? {})).not.toContain("403");
      expect(operation!.security ?? [{ BasicAuth: [] }], operationId).toContainEqual({
        BasicAuth: [],
      });
    }
  });

  it("refuses a token without the permission, and lets others through", () => {
    expect(() => checkPermission("createQuote", caller(["VIEW", "TRANSACT"]))).not.toThrow();
    expect(() => checkPermission("listTokens", caller([]))).not.toThrow();
    const refused = refusalOf("createQuote", caller(["VIEW", "MANAGE"]));
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 403, code: "FORBIDDEN" });
    const tokenRefused = refusalOf("deleteTokenById", caller(["VIEW", "TRANSACT"]));
    // The token operations declare no 403: their refusal is 401 UNAUTHORIZED.
    expect(tokenRefused).toBeInstanceOf(ApiError);
    expect(tokenRefused).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    expect((tokenRefused as Error).message).toMatch(/MANAGE/);
  });

  it("fails closed for a caller with no permissions, and leaves agents to their policy", () => {
    expect(() => checkPermission("executeQuote", caller())).toThrow(ApiError);
    expect(() => checkPermission("executeQuote", caller(undefined, true))).not.toThrow();
  });
});
