import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";

function individual(lastName: string, extra: Record<string, unknown> = {}) {
  return {
    customerType: "INDIVIDUAL" as const,
    personalInfo: {
      firstName: "Ada",
      lastName,
      email: `ada.${lastName.toLowerCase()}@example.com`,
    },
    ...extra,
  };
}

describe.each(databases)("customers on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("creates an individual and reads it back", async () => {
    const { data, response } = await sandbox.client.POST("/customers", {
      body: individual("Lovelace"),
    });
    expect(response.status).toBe(201);
    expect(data?.id).toMatch(/^Customer:[0-9a-f-]{36}$/);
    expect(data).toMatchObject({ customerType: "INDIVIDUAL", kycStatus: "APPROVED" });
    const got = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: data!.id } },
    });
    expect(got.data).toEqual(data);
  });

  it("takes kycStatus from the last name's magic suffix", async () => {
    const pending = await sandbox.client.POST("/customers", { body: individual("Smith001") });
    const rejected = await sandbox.client.POST("/customers", { body: individual("Smith002") });
    const approved = await sandbox.client.POST("/customers", { body: individual("Smith003") });
    expect(pending.data?.kycStatus).toBe("PENDING");
    expect(rejected.data?.kycStatus).toBe("REJECTED");
    expect(approved.data?.kycStatus).toBe("APPROVED");
  });

  it("creates a business with its registration details", async () => {
    const { data, response } = await sandbox.client.POST("/customers", {
      body: {
        customerType: "BUSINESS",
        businessInfo: {
          legalName: "Acme Ltd",
          registrationNumber: "REG-123",
          email: "ops@acme.example",
        },
        beneficialOwners: [
          { personalInfo: { firstName: "Wile", lastName: "Coyote", email: "wile@acme.example" } },
        ],
      },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ customerType: "BUSINESS", kycStatus: "APPROVED" });
  });

  it("refuses a second customer with the same platformCustomerId", async () => {
    const first = await sandbox.client.POST("/customers", {
      body: individual("Dup", { platformCustomerId: "user-42" }),
    });
    expect(first.response.status).toBe(201);
    const second = await sandbox.client.POST("/customers", {
      body: individual("Dup", { platformCustomerId: "user-42" }),
    });
    expect(second.response.status).toBe(409);
    expect(second.error).toMatchObject({ code: "CONFLICT" });
  });

  it("pages through the list with a cursor, newest first, without gaps or repeats", async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { data } = await sandbox.client.POST("/customers", {
        body: individual(`Page${i}`, { platformCustomerId: `page-${i}` }),
      });
      created.push(data!.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { data } = await sandbox.client.GET("/customers", {
        params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } },
      });
      expect(data!.data.length).toBeLessThanOrEqual(2);
      seen.push(...data!.data.map((c) => c.id));
      cursor = data!.nextCursor;
      if (!data!.hasMore) expect(cursor).toBeUndefined();
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of created) expect(seen).toContain(id);
    expect(seen.indexOf(created[4]!)).toBeLessThan(seen.indexOf(created[0]!));
  });

  it("filters the list", async () => {
    const { data } = await sandbox.client.GET("/customers", {
      params: { query: { kycStatus: "REJECTED" } },
    });
    expect(data!.data.length).toBeGreaterThan(0);
    expect(data!.data.every((c) => c.kycStatus === "REJECTED")).toBe(true);
  });

  it("hides one platform's customers from another (404, never 403)", async () => {
    const { data } = await sandbox.client.POST("/customers", { body: individual("Private") });
    const other = await sandbox.otherPlatformClient();
    const got = await other.GET("/customers/{customerId}", {
      params: { path: { customerId: data!.id } },
    });
    expect(got.response.status).toBe(404);
    expect(got.error).toMatchObject({ code: "USER_NOT_FOUND" });
    const list = await other.GET("/customers", {});
    expect(list.data!.data).toEqual([]);
  });

  it("answers an unknown customer id with 404", async () => {
    const got = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: "Customer:00000000-0000-4000-8000-000000000000" } },
    });
    expect(got.response.status).toBe(404);
  });
});
