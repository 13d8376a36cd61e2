import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INDIVIDUAL_KYC_TABLE } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { eventsAbout, withId } from "./money-helpers.js";

function individual(fullName: string, extra: Record<string, unknown> = {}) {
  return {
    customerType: "INDIVIDUAL" as const,
    fullName,
    email: `${fullName.toLowerCase().replace(/\W+/g, ".")}@example.com`,
    ...extra,
  };
}

const business = (registrationNumber: string, extra: Record<string, unknown> = {}) => ({
  customerType: "BUSINESS" as const,
  email: "ops@acme.example",
  businessInfo: {
    legalName: "Acme Ltd",
    registrationNumber,
    country: "US",
    taxId: "84-2203117",
    incorporatedOn: "2019-06-01",
  },
  ...extra,
});

describe.each(databases)("customers on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("creates an individual with the live contract's flat fields and reads it back", async () => {
    const { data, response } = await sandbox.client.POST("/customers", {
      body: individual("Ada Lovelace", {
        platformCustomerId: "Ada-1815",
        region: "GB",
        currencies: ["GBP", "USD"],
        phoneNumber: "+442071234567",
        birthDate: "1815-12-10",
        nationality: "GB",
        address: { line1: "12 St James's Square", postalCode: "SW1Y 4JH", country: "GB" },
        idType: "NON_US_TAX_ID",
        identifier: "AB123456C",
        pepStatus: "NONE",
      }),
    });
    expect(response.status).toBe(201);
    expect(data?.id).toMatch(/^Customer:[0-9a-f-]{36}$/);
    expect(data).toMatchObject({
      customerType: "INDIVIDUAL",
      platformCustomerId: "Ada-1815",
      fullName: "Ada Lovelace",
      kycStatus: "APPROVED",
      region: "GB",
      currencies: ["GBP", "USD"],
      email: "ada.lovelace@example.com",
      phoneNumber: "+442071234567",
      birthDate: "1815-12-10",
      address: { line1: "12 St James's Square", postalCode: "SW1Y 4JH", country: "GB" },
      idType: "NON_US_TAX_ID",
      pepStatus: "NONE",
      isDeleted: false,
    });
    // The identifier is write-only; the UMA address defaults from the platform's domain.
    expect(data).not.toHaveProperty("identifier");
    expect(data?.umaAddress).toBe("$ada-1815@uma.sandbox.localhost");
    const got = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: data!.id! } },
    });
    expect(got.data).toEqual(data);
  });

  it("defaults platformCustomerId to the id and currencies to USD", async () => {
    const { data } = await sandbox.client.POST("/customers", { body: individual("Grace Hopper") });
    expect(data?.platformCustomerId).toBe(data?.id);
    expect(data?.currencies).toEqual(["USD"]);
  });

  it("covers every row of the individual KYC table", () => {
    expect(INDIVIDUAL_KYC_TABLE.rows.map((r) => r.match)).toEqual(["001", "002", "003"]);
  });

  for (const [fullName, kycStatus, event] of [
    ["Sam Lee001", "PENDING", "CUSTOMER.KYC_PENDING"],
    ["Sam Lee002", "REJECTED", "CUSTOMER.KYC_REJECTED"],
    ["Sam Lee003", "UNVERIFIED", undefined],
    ["Sam Lee", "APPROVED", "CUSTOMER.KYC_APPROVED"],
  ] as const) {
    it(`sets kycStatus ${kycStatus} at creation for the name ${fullName}`, async () => {
      const { data } = await sandbox.client.POST("/customers", { body: individual(fullName) });
      expect(data).toMatchObject({ kycStatus });
      const events = await eventsAbout(sandbox.server.data, withId(data!).id);
      expect(events).toEqual(
        event ? [{ type: event, data: expect.objectContaining({ kycStatus }) }] : [],
      );
    });
  }

  it("creates a business UNVERIFIED, with its business details", async () => {
    const { data, response } = await sandbox.client.POST("/customers", {
      body: business("REG-123", {
        address: { line1: "1 Main St", postalCode: "94107", country: "US" },
      }),
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      customerType: "BUSINESS",
      kybStatus: "UNVERIFIED",
      businessInfo: { legalName: "Acme Ltd", registrationNumber: "REG-123", taxId: "84-2203117" },
      address: { line1: "1 Main St" },
    });
    expect(data).not.toHaveProperty("kycStatus");
  });

  it("refuses fields the contract does not have, and a business without its required details", async () => {
    const extra = await sandbox.client.POST("/customers", {
      body: { ...individual("Extra Field"), personalInfo: { firstName: "Ada" } } as never,
    });
    expect(extra.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const partial = await sandbox.client.POST("/customers", {
      body: { customerType: "BUSINESS", businessInfo: { legalName: "Acme" } } as never,
    });
    expect(partial.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("refuses a second customer with the same platformCustomerId or UMA address", async () => {
    const first = await sandbox.client.POST("/customers", {
      body: individual("Dup One", { platformCustomerId: "user-42" }),
    });
    expect(first.response.status).toBe(201);
    const second = await sandbox.client.POST("/customers", {
      body: individual("Dup Two", { platformCustomerId: "user-42" }),
    });
    expect(second.error).toMatchObject({ status: 409, code: "CONFLICT" });
    const sameUma = await sandbox.client.POST("/customers", {
      body: individual("Dup Three", { umaAddress: first.data!.umaAddress }),
    });
    expect(sameUma.error).toMatchObject({ status: 409, code: "UMA_ADDRESS_EXISTS" });
    const badUma = await sandbox.client.POST("/customers", {
      body: individual("Bad Uma", { umaAddress: "not an address" }),
    });
    expect(badUma.error).toMatchObject({ status: 400, code: "INVALID_UMA_ADDRESS" });
  });

  it("records the end user terms only at their current version", async () => {
    const terms = await sandbox.client.GET("/customers/end-user-terms");
    expect(terms.data?.url).toMatch(/^http:\/\//);
    const consent = {
      acceptedAt: "2025-10-13T09:00:00Z",
      ipAddress: "203.0.113.7",
      termsVersion: terms.data!.version,
      acceptanceMethod: "CHECKBOX" as const,
    };
    const ok = await sandbox.client.POST("/customers", {
      body: individual("Terms Kept", { endUserTermsConsent: consent }),
    });
    expect(ok.data?.endUserTermsConsent).toEqual(consent);
    const stale = await sandbox.client.POST("/customers", {
      body: individual("Terms Old", { endUserTermsConsent: { ...consent, termsVersion: "1999" } }),
    });
    expect(stale.error).toMatchObject({ status: 400, code: "END_USER_TERMS_VERSION_NOT_FOUND" });
  });

  it("updates the fields sent and leaves the others", async () => {
    const { data: created } = await sandbox.client.POST("/customers", {
      body: individual("Upd Ate", { birthDate: "1990-01-01", nationality: "US" }),
    });
    const id = withId(created!).id;
    const { data, response } = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: id } },
      body: {
        customerType: "INDIVIDUAL",
        address: { line1: "77 Mission St", postalCode: "94105", country: "US" },
        currencies: ["USD", "EUR"],
      },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      fullName: "Upd Ate",
      birthDate: "1990-01-01",
      currencies: ["USD", "EUR"],
      address: { line1: "77 Mission St" },
    });
    // ISO timestamps of one format order as strings.
    expect(data && "updatedAt" in data && data.updatedAt! >= created!.updatedAt!).toBe(true);
    const got = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(got.data).toEqual(data);

    const both = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: id } },
      body: { customerType: "INDIVIDUAL", email: "a@example.com", phoneNumber: "+14155550100" },
    });
    expect(both.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const wrongType = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: id } },
      body: { customerType: "BUSINESS" },
    });
    expect(wrongType.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("changes a business's details field by field", async () => {
    const { data: created } = await sandbox.client.POST("/customers", {
      body: business("REG-777"),
    });
    const { data } = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: withId(created!).id } },
      body: { customerType: "BUSINESS", businessInfo: { doingBusinessAs: "Acme" } },
    });
    expect(data).toMatchObject({
      businessInfo: {
        legalName: "Acme Ltd",
        registrationNumber: "REG-777",
        doingBusinessAs: "Acme",
      },
    });
  });

  it("deletes a customer once: still readable, out of lists, 410 the second time", async () => {
    const { data: created } = await sandbox.client.POST("/customers", {
      body: individual("Del Ete", { platformCustomerId: "to-delete" }),
    });
    const id = withId(created!).id;
    const deleted = await sandbox.client.DELETE("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(deleted.response.status).toBe(200);
    expect(deleted.data).toMatchObject({ id, isDeleted: true });
    const got = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(got.data).toMatchObject({ isDeleted: true });
    const hidden = await sandbox.client.GET("/customers", {
      params: { query: { platformCustomerId: "to-delete" } },
    });
    expect(hidden.data).toMatchObject({ data: [], totalCount: 0 });
    const shown = await sandbox.client.GET("/customers", {
      params: { query: { platformCustomerId: "to-delete", isIncludingDeleted: true } },
    });
    expect(shown.data?.data.map((c) => c.id)).toEqual([id]);
    const again = await sandbox.client.DELETE("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(again.error).toMatchObject({ status: 410, code: "CUSTOMER_DELETED" });
    // Nothing new can be opened for it: no currency can be added.
    const account = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: id } },
      body: { customerType: "INDIVIDUAL", currencies: ["USD", "EUR"] },
    });
    expect(account.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
  });

  it("pages through the list with a cursor, newest first, without gaps or repeats", async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { data } = await sandbox.client.POST("/customers", {
        body: individual(`Page Person${i}`, { platformCustomerId: `page-${i}` }),
      });
      created.push(withId(data!).id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let total: number | undefined;
    do {
      const { data } = await sandbox.client.GET("/customers", {
        params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } },
      });
      expect(data!.data.length).toBeLessThanOrEqual(2);
      total ??= data!.totalCount;
      expect(data!.totalCount).toBe(total);
      seen.push(...data!.data.map((c) => c.id!));
      cursor = data!.nextCursor;
      if (!data!.hasMore) expect(cursor).toBeUndefined();
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(total);
    for (const id of created) expect(seen).toContain(id);
    expect(seen.indexOf(created[4]!)).toBeLessThan(seen.indexOf(created[0]!));
  });

  it("still counts the whole list on a page past its last row", async () => {
    const older = await sandbox.client.POST("/customers", { body: individual("Past End Older") });
    const newer = await sandbox.client.POST("/customers", { body: individual("Past End Newer") });
    const since = { createdAfter: older.data!.createdAt };
    const first = await sandbox.client.GET("/customers", {
      params: { query: { ...since, limit: 1 } },
    });
    expect(first.data).toMatchObject({ hasMore: true, totalCount: 2 });
    expect(first.data!.data.map((c) => c.id)).toEqual([newer.data!.id]);
    // The only row after the cursor goes away: the next page is empty.
    await sandbox.client.DELETE("/customers/{customerId}", {
      params: { path: { customerId: older.data!.id! } },
    });
    const past = await sandbox.client.GET("/customers", {
      params: { query: { ...since, limit: 1, cursor: first.data!.nextCursor! } },
    });
    expect(past.data).toEqual({ data: [], hasMore: false, totalCount: 1 });
  });

  it("filters the list by type, region, currency, UMA address and time", async () => {
    const { data: made } = await sandbox.client.POST("/customers", {
      body: individual("Filter Me", { region: "MX", currencies: ["MXN"] }),
    });
    const byRegion = await sandbox.client.GET("/customers", {
      params: { query: { region: "MX" } },
    });
    expect(byRegion.data?.data.map((c) => c.id)).toEqual([made!.id]);
    const byCurrency = await sandbox.client.GET("/customers", {
      params: { query: { currency: "MXN" } },
    });
    expect(byCurrency.data?.data.map((c) => c.id)).toEqual([made!.id]);
    const byUma = await sandbox.client.GET("/customers", {
      params: { query: { umaAddress: made!.umaAddress.toUpperCase() } },
    });
    expect(byUma.data?.data.map((c) => c.id)).toEqual([made!.id]);
    const businesses = await sandbox.client.GET("/customers", {
      params: { query: { customerType: "BUSINESS" } },
    });
    expect(businesses.data!.data.length).toBeGreaterThan(0);
    expect(businesses.data!.data.every((c) => c.customerType === "BUSINESS")).toBe(true);
    const later = await sandbox.client.GET("/customers", {
      params: { query: { createdAfter: made!.createdAt! } },
    });
    expect(later.data?.data.map((c) => c.id)).toContain(made!.id);
    const earlier = await sandbox.client.GET("/customers", {
      params: { query: { createdBefore: "2000-01-01T00:00:00Z" } },
    });
    expect(earlier.data).toMatchObject({ data: [], totalCount: 0 });
  });

  it("takes times and ids in the query as a partner types them, colons unescaped", async () => {
    const { data: made } = await sandbox.client.POST("/customers", {
      body: individual("Colon Typed"),
    });
    const created = withId(made!);
    // As in a curl command or a browser's address bar: `:` left as is.
    const res = await sandbox.rawFetch(
      `/customers?createdAfter=${created.createdAt!}&updatedBefore=2999-01-01T00:00:00Z`,
    );
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: { id: string }[] };
    expect(page.data.map((c) => c.id)).toContain(created.id);
    const owners = await sandbox.rawFetch(`/beneficial-owners?customerId=${created.id}`);
    expect(owners.status).toBe(200);
  });

  it("hides one platform's customers from another (404, never 403)", async () => {
    const { data } = await sandbox.client.POST("/customers", { body: individual("Pri Vate") });
    const id = withId(data!).id;
    const other = await sandbox.otherPlatformClient();
    const got = await other.GET("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(got.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
    const patched = await other.PATCH("/customers/{customerId}", {
      params: { path: { customerId: id } },
      body: { customerType: "INDIVIDUAL", fullName: "Taken Over" },
    });
    expect(patched.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
    const deleted = await other.DELETE("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(deleted.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
    const list = await other.GET("/customers", {});
    expect(list.data).toMatchObject({ data: [], totalCount: 0 });
    const mine = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(mine.data).toMatchObject({ fullName: "Pri Vate", isDeleted: false });
  });

  it("answers an unknown or malformed customer id with 404", async () => {
    for (const customerId of ["Customer:00000000-0000-4000-8000-000000000000", "nope"]) {
      const got = await sandbox.client.GET("/customers/{customerId}", {
        params: { path: { customerId } },
      });
      expect(got.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
    }
  });

  it("answers a method a path does not serve with 405", async () => {
    const res = await sandbox.rawFetch("/customers", { method: "PUT" });
    expect(res.status).toBe(405);
    expect(await res.json()).toMatchObject({ status: 405, code: "METHOD_NOT_ALLOWED" });
  });
});
