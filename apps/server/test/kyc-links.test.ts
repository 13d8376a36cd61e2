import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { advanceClock, eventsAbout } from "./money-helpers.js";
import { withoutKycLinkToken } from "../src/areas/customers/kyc-page.js";

// POST /customers/{customerId}/kyc-link and the sandbox's hosted page behind
// its kycUrl: the value entered decides the customer's status, once.

describe.each(databases)("hosted KYC links on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function individual(fullName = "Kyc Link001"): Promise<string> {
    // 001: created PENDING, so the page's answer is what changes it.
    const { data } = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName },
    });
    return data!.id!;
  }

  async function link(customerId: string, redirectUri?: string) {
    const { data, response, error } = await sandbox.client.POST(
      "/customers/{customerId}/kyc-link",
      {
        params: { path: { customerId } },
        ...(redirectUri ? { body: { redirectUri } } : {}),
      },
    );
    if (!data) throw new Error(`kyc-link: ${response.status} ${JSON.stringify(error)}`);
    expect(response.status).toBe(201);
    return data;
  }

  /** Submits the page's form as a browser would. */
  const submit = (kycUrl: string, value: string) =>
    fetch(kycUrl, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ value }).toString(),
      redirect: "manual",
    });

  const statusOf = async (id: string) =>
    (await sandbox.client.GET("/customers/{customerId}", { params: { path: { customerId: id } } }))
      .data;

  it("answers a single-use link to the sandbox's page, valid for an hour, and changes nothing yet", async () => {
    const id = await individual();
    const before = await sandbox.client.GET("/sandbox/clock");
    const created = await link(id);
    expect(created.provider).toBe("SUMSUB");
    expect(created.token).toBeUndefined();
    expect(created.kycUrl).toMatch(/\/kyc-link\/[A-Za-z0-9_-]{43}$/);
    expect(new URL(created.kycUrl).origin).toBe(new URL(sandbox.server.baseUrl).origin);
    const hour = Date.parse(created.expiresAt) - Date.parse(before.data!.now);
    expect(hour).toBeGreaterThanOrEqual(3_600_000);
    expect(hour).toBeLessThan(3_660_000);
    expect(await statusOf(id)).toMatchObject({ kycStatus: "PENDING" });

    const page = await fetch(created.kycUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).toContain('<form method="post">');
    expect(html).toContain("Full legal name");
  });

  it("decides the status by the name entered, announces it, then refuses the link", async () => {
    const cases = [
      ["Ana Souza 002", "REJECTED", "CUSTOMER.KYC_REJECTED"],
      ["Jane Doe", "APPROVED", "CUSTOMER.KYC_APPROVED"],
    ] as const;
    for (const [name, status, event] of cases) {
      const id = await individual();
      const { kycUrl } = await link(id);
      const answer = await submit(kycUrl, name);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain(`<strong id="status">${status}</strong>`);
      const customer = await statusOf(id);
      expect(customer).toMatchObject({ kycStatus: status });
      const events = await eventsAbout(sandbox.server.data, id);
      expect(events.at(-1)).toEqual({ type: event, data: customer });
      // Used once: the page and the form are gone.
      expect((await fetch(kycUrl)).status).toBe(410);
      expect((await submit(kycUrl, "Jane Doe")).status).toBe(410);
      expect(await statusOf(id)).toMatchObject({ kycStatus: status });
    }
  });

  it("runs KYB for a business by its registration number", async () => {
    const { data } = await sandbox.client.POST("/customers", {
      body: {
        customerType: "BUSINESS",
        businessInfo: {
          legalName: "Link Works Ltd",
          country: "US",
          taxId: "84-2203118",
          incorporatedOn: "2020-02-01",
        },
      },
    });
    const { kycUrl } = await link(data!.id!);
    expect(await (await fetch(kycUrl)).text()).toContain("Company registration number");
    expect((await submit(kycUrl, "REG-77001")).status).toBe(200);
    expect(await statusOf(data!.id!)).toMatchObject({ kybStatus: "PENDING" });
    const events = await eventsAbout(sandbox.server.data, data!.id!);
    expect(events.at(-1)?.type).toBe("CUSTOMER.KYB_PENDING");
  });

  it("redirects to redirectUri once submitted", async () => {
    const { kycUrl } = await link(await individual(), "https://app.example.com/onboarding/done");
    const answer = await submit(kycUrl, "Jane Doe");
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe("https://app.example.com/onboarding/done");
  });

  it("expires after an hour of the platform's clock, and knows no other link", async () => {
    const id = await individual();
    const { kycUrl } = await link(id);
    await advanceClock(sandbox.client, 3601);
    expect((await fetch(kycUrl)).status).toBe(410);
    expect((await submit(kycUrl, "Jane Doe")).status).toBe(410);
    expect(await statusOf(id)).toMatchObject({ kycStatus: "PENDING" });
    const other = kycUrl.replace(/[A-Za-z0-9_-]{43}$/, "A".repeat(43));
    expect((await fetch(other)).status).toBe(404);
    expect((await fetch(kycUrl.replace(/[A-Za-z0-9_-]{43}$/, "short"))).status).toBe(404);
  });

  it("is 409 for a customer whose contact details are not all confirmed, until they are", async () => {
    const { data } = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Camille Martin001",
        region: "FR",
        email: "camille@example.fr",
        phoneNumber: "+33612345678",
      },
    });
    const customerId = data!.id!;
    const path = { params: { path: { customerId } } };
    const refused = await sandbox.client.POST("/customers/{customerId}/kyc-link", path);
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({
      code: "CONFLICT",
      details: { contactVerification: { email: "PENDING", phone: "PENDING" } },
    });
    for (const channel of ["verify-email", "verify-phone"] as const) {
      await sandbox.client.POST(`/customers/{customerId}/${channel}`, path);
      const confirmed = await sandbox.client.POST(`/customers/{customerId}/${channel}/confirm`, {
        ...path,
        body: { code: "123456" },
      });
      expect(confirmed.response.status).toBe(200);
    }
    expect((await link(customerId)).kycUrl).toMatch(/\/kyc-link\//);
  });

  it("keeps the token out of logged paths", () => {
    expect(withoutKycLinkToken(`/kyc-link/${"x".repeat(43)}`)).toBe("/kyc-link/[token]");
    expect(withoutKycLinkToken("/2025-10-13/customers")).toBe("/2025-10-13/customers");
  });

  it("answers 404 for an unknown, deleted or foreign customer, and 400 for a bad redirectUri", async () => {
    const deleted = await individual();
    await sandbox.client.DELETE("/customers/{customerId}", {
      params: { path: { customerId: deleted } },
    });
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "Someone Else" },
    });
    for (const customerId of [
      "Customer:019542f5-b3e7-1d02-0000-000000000001",
      deleted,
      foreign.data!.id!,
    ]) {
      const { response } = await sandbox.client.POST("/customers/{customerId}/kyc-link", {
        params: { path: { customerId } },
      });
      expect(response.status).toBe(404);
    }
    const bad = await sandbox.client.POST("/customers/{customerId}/kyc-link", {
      params: { path: { customerId: await individual() } },
      body: { redirectUri: "not a uri" },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: "INVALID_INPUT" });
  });
});
