// The mistakes a newcomer makes first get an answer that says how to fix
// them: the field as the request names it, the allowed values, the name that
// was probably meant, the version segment, the auth scheme. Codes stay the
// contract's (400 INVALID_INPUT, 401 UNAUTHORIZED, 404 NOT_FOUND).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { errorOf } from "./support/wallet.js";

describe.each(databases)("errors a newcomer makes on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  function onlyIssue(res: { error?: unknown }) {
    const error = errorOf(res);
    expect(error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const issues = (error.details as { errors: { field: string; message: string }[] }).errors;
    expect(issues).toHaveLength(1);
    return { error, issue: issues[0]! };
  }

  it("names an unknown field and the known one it is closest to", async () => {
    const res = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fulName: "Ada Lovelace" } as never,
    });
    const { error, issue } = onlyIssue(res);
    expect(issue.field).toBe("fulName");
    expect(issue.message).toBe("unknown field `fulName`; did you mean `fullName`?");
    expect(error.message).toContain("did you mean `fullName`?");
    // Nested, and with no close name: the known ones are listed.
    const nested = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Ada Lovelace",
        address: { line1: "1 Main St", postalCode: "94105", country: "US", postCode: "94105" },
      } as never,
    });
    expect(onlyIssue(nested).issue).toMatchObject({
      field: "address.postCode",
      message: "unknown field `postCode`; did you mean `postalCode`?",
    });
    const far = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", zzzzzzzz: 1 } as never,
    });
    expect(onlyIssue(far).issue.message).toMatch(/^unknown field `zzzzzzzz`; known: .*`fullName`/);
  });

  it("names an unknown query parameter and the one it is closest to", async () => {
    const res = await sandbox.client.GET("/transactions", {
      params: { query: { tpye: "INCOMING" } as never },
    });
    expect(onlyIssue(res).issue).toEqual({
      field: "tpye",
      message: "unknown query parameter `tpye`; did you mean `type`?",
    });
  });

  it("reports a wrong enum value at the request's own field, with the allowed values", async () => {
    const res = await sandbox.client.POST("/customers", {
      body: { customerType: "PERSON", fullName: "Ada Lovelace" } as never,
    });
    const { error, issue } = onlyIssue(res);
    expect(issue.field).toBe("customerType");
    expect(issue.message).toContain("INDIVIDUAL, BUSINESS");
    expect(error.message).toContain("customerType");
    const query = await sandbox.client.GET("/transactions", {
      params: { query: { type: "SIDEWAYS" } as never },
    });
    expect(onlyIssue(query).issue).toMatchObject({ field: "type" });
    expect(onlyIssue(query).issue.message).toContain("INCOMING, OUTGOING");
  });

  it("says a body without Content-Type must be sent as application/json", async () => {
    const res = await sandbox.rawFetch("/customers", {
      method: "POST",
      body: JSON.stringify({ customerType: "INDIVIDUAL", fullName: "Ada Lovelace" }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; details: { errors: { field: string }[] } };
    const issues = body.details.errors;
    expect(body.code).toBe("INVALID_INPUT");
    expect(issues.map((i) => i.field)).toEqual(["Content-Type"]);
    expect(JSON.stringify(issues)).toContain("Content-Type: application/json");
    expect(JSON.stringify(body)).not.toContain("2025-10-13.customers");
  });

  it("says API paths start with the version segment", async () => {
    const origin = new URL(sandbox.server.baseUrl).origin;
    const res = await fetch(`${origin}/customers`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("NOT_FOUND");
    expect(body.message).toContain("API paths start with /2025-10-13");
    expect(body.message).toContain("did you mean /2025-10-13/customers?");
    const elsewhere = (await (await fetch(`${origin}/nothing-here`)).json()) as {
      message: string;
    };
    expect(elsewhere.message).toContain("API paths start with /2025-10-13");
  });

  it("says API tokens use Basic auth when the secret comes as a Bearer token", async () => {
    const res = await sandbox.rawFetch("/customers", {
      auth: `Bearer ${sandbox.credentials.secret}`,
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { code: string; message: string; reason: string };
    expect(body.code).toBe("UNAUTHORIZED");
    expect(body.message).toContain("API tokens use HTTP Basic auth");
    expect(body.reason).toBe("Bearer credentials are not an agent access token");
  });
});
