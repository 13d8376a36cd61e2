import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "@sandbox/client";
import { KYB_TABLE, KYC_TABLE } from "@sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createCustomer, eventsAbout } from "./money-helpers.js";

async function createBusiness(client: SandboxClient, registrationNumber: string) {
  const { data, error } = await client.POST("/customers", {
    body: {
      customerType: "BUSINESS",
      businessInfo: { legalName: "Acme Ltd", registrationNumber },
      beneficialOwners: [
        { personalInfo: { firstName: "Wile", lastName: "Coyote", email: "wile@acme.example" } },
      ],
    },
  });
  if (!data) throw new Error(JSON.stringify(error));
  return data;
}

describe.each(databases)("KYC and KYB on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("covers every row of the KYC and KYB tables in this file", () => {
    expect(KYC_TABLE.rows.map((r) => r.match)).toEqual(["001", "002"]);
    expect(KYB_TABLE.rows.map((r) => r.match)).toEqual(["001", "002"]);
  });

  for (const [lastName, kycStatus] of [
    ["Smith001", "PENDING"],
    ["Smith002", "REJECTED"],
    ["Smith", "APPROVED"],
  ] as const) {
    it(`sets kycStatus ${kycStatus} for last name ${lastName} and reports it by webhook`, async () => {
      const customer = await createCustomer(sandbox.client, { lastName });
      expect(customer.kycStatus).toBe(kycStatus);
      const events = await eventsAbout(sandbox.server.data, customer.id);
      expect(events).toEqual([
        { type: "CUSTOMER.KYC_STATUS_CHANGE", data: expect.objectContaining({ kycStatus }) },
      ]);
    });
  }

  for (const [registrationNumber, kybStatus] of [
    ["HRB 123001", "PENDING"],
    ["REG-000002", "REJECTED"],
    ["12345678", "APPROVED"],
  ] as const) {
    it(`sets kybStatus ${kybStatus} for registration number ${registrationNumber}`, async () => {
      const business = await createBusiness(sandbox.client, registrationNumber);
      expect(business).not.toHaveProperty("kybStatus");
      const { data, response } = await sandbox.client.POST("/verifications", {
        body: { customerId: business.id },
      });
      expect(response.status).toBe(201);
      expect(data).toMatchObject({ customerId: business.id, kybStatus });
      expect(data?.id).toMatch(/^Verification:/);
      const customer = await sandbox.client.GET("/customers/{customerId}", {
        params: { path: { customerId: business.id } },
      });
      expect(customer.data).toMatchObject({ kybStatus });
      const kyb = (await eventsAbout(sandbox.server.data, business.id)).filter(
        (e) => e.type === "CUSTOMER.KYB_STATUS_CHANGE",
      );
      expect(kyb.map((e) => e.data.kybStatus)).toEqual([kybStatus]);

      // Verifying again changes nothing, so no second event.
      await sandbox.client.POST("/verifications", { body: { customerId: business.id } });
      const again = (await eventsAbout(sandbox.server.data, business.id)).filter(
        (e) => e.type === "CUSTOMER.KYB_STATUS_CHANGE",
      );
      expect(again).toHaveLength(1);
    });
  }

  it("verifies businesses only, and only the platform's own", async () => {
    const person = await createCustomer(sandbox.client);
    const res = await sandbox.client.POST("/verifications", { body: { customerId: person.id } });
    expect(res.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const business = await createBusiness(sandbox.client, "12345678");
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.POST("/verifications", { body: { customerId: business.id } });
    expect(foreign.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
  });
});
