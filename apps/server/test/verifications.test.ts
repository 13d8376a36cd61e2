import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "@payments-sandbox/client";
import { KYB_TABLE, KYC_TABLE } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createCustomer, eventsAbout, withId } from "./money-helpers.js";

async function createBusiness(client: SandboxClient, registrationNumber: string) {
  const { data, error } = await client.POST("/customers", {
    body: {
      customerType: "BUSINESS",
      businessInfo: {
        legalName: "Acme Ltd",
        registrationNumber,
        country: "US",
        taxId: "84-2203117",
        incorporatedOn: "2019-06-01",
      },
    },
  });
  if (!data) throw new Error(JSON.stringify(error));
  return withId(data);
}

const ownerInfo = (lastName: string) => ({
  firstName: "Wile",
  lastName,
  birthDate: "1949-09-17",
  nationality: "US",
  address: { line1: "1 Mesa Rd", postalCode: "85001", country: "US" },
  idType: "SSN" as const,
  identifier: "123-45-6789",
});

describe.each(databases)("KYC, KYB and beneficial owners on %s", (kind) => {
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

  for (const [registrationNumber, kybStatus, verificationStatus] of [
    ["HRB 123001", "PENDING", "PENDING_MANUAL_REVIEW"],
    ["REG-000002", "REJECTED", "REJECTED"],
    ["12345678", "APPROVED", "APPROVED"],
  ] as const) {
    it(`verifies registration number ${registrationNumber}: ${verificationStatus}, kybStatus ${kybStatus}`, async () => {
      const business = await createBusiness(sandbox.client, registrationNumber);
      expect(business).toMatchObject({ kybStatus: "UNVERIFIED" });
      const { data, response } = await sandbox.client.POST("/verifications", {
        body: { customerId: business.id },
      });
      expect(response.status).toBe(200);
      expect(data).toMatchObject({ customerId: business.id, verificationStatus, errors: [] });
      expect(data?.id).toMatch(/^Verification:/);
      const customer = await sandbox.client.GET("/customers/{customerId}", {
        params: { path: { customerId: business.id } },
      });
      expect(customer.data).toMatchObject({ kybStatus });
      const events = await eventsAbout(sandbox.server.data, business.id);
      expect(events).toEqual([
        { type: `CUSTOMER.KYB_${kybStatus}`, data: expect.objectContaining({ kybStatus }) },
      ]);
      const verificationEvents = await eventsAbout(sandbox.server.data, data!.id);
      expect(verificationEvents).toEqual([
        { type: `VERIFICATION.${verificationStatus}`, data: { ...data } },
      ]);
      const got = await sandbox.client.GET("/verifications/{verificationId}", {
        params: { path: { verificationId: data!.id } },
      });
      expect(got.data).toEqual(data);

      // A pending business may be submitted again: no new customer event.
      // A decided one is refused.
      const again = await sandbox.client.POST("/verifications", {
        body: { customerId: business.id },
      });
      if (kybStatus === "PENDING") {
        expect(again.data).toMatchObject({ verificationStatus });
        const after = await eventsAbout(sandbox.server.data, business.id);
        expect(after).toHaveLength(1);
      } else {
        expect(again.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      }
    });
  }

  it("submits an individual whose KYC is undecided, naming what is missing", async () => {
    const pending = await createCustomer(sandbox.client, { lastName: "Smith001" });
    expect(pending).toMatchObject({ kycStatus: "PENDING" });
    const missing = await sandbox.client.POST("/verifications", {
      body: { customerId: pending.id },
    });
    expect(missing.data?.verificationStatus).toBe("RESOLVE_ERRORS");
    expect(missing.data?.errors.map((e) => [e.type, e.field])).toEqual(
      ["birthDate", "nationality", "address", "idType", "identifier"].map((f) => [
        "MISSING_FIELD",
        f,
      ]),
    );
    const patched = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: pending.id } },
      body: {
        customerType: "INDIVIDUAL",
        birthDate: "1990-02-03",
        nationality: "US",
        address: { line1: "1 Main St", postalCode: "94107", country: "US" },
        idType: "SSN",
        identifier: "123-45-6789",
      },
    });
    expect(patched.response.status).toBe(200);
    const complete = await sandbox.client.POST("/verifications", {
      body: { customerId: pending.id },
    });
    expect(complete.data).toMatchObject({
      verificationStatus: "PENDING_MANUAL_REVIEW",
      errors: [],
    });

    const unverified = await createCustomer(sandbox.client, { lastName: "Smith003" });
    expect(unverified).toMatchObject({ kycStatus: "UNVERIFIED" });
    const poor = await sandbox.client.POST("/verifications", {
      body: { customerId: unverified.id },
    });
    expect(poor.data).toMatchObject({
      verificationStatus: "RESOLVE_ERRORS",
      errors: [{ resourceId: unverified.id, type: "POOR_QUALITY_DOCUMENT" }],
    });

    for (const lastName of ["Smith002", "Smith"]) {
      const decided = await createCustomer(sandbox.client, { lastName });
      const refused = await sandbox.client.POST("/verifications", {
        body: { customerId: decided.id },
      });
      expect(refused.error, lastName).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    }

    const listed = await sandbox.client.GET("/verifications", {
      params: { query: { customerId: pending.id } },
    });
    expect(listed.data?.data.map((v) => v.verificationStatus)).toEqual([
      "PENDING_MANUAL_REVIEW",
      "RESOLVE_ERRORS",
    ]);
    expect(listed.data?.totalCount).toBe(2);
    const byStatus = await sandbox.client.GET("/verifications", {
      params: { query: { verificationStatus: "PENDING_MANUAL_REVIEW" } },
    });
    expect(byStatus.data!.data.every((v) => v.verificationStatus === "PENDING_MANUAL_REVIEW")).toBe(
      true,
    );
  });

  it("verifies only the platform's own customers and shows only its own verifications", async () => {
    const business = await createBusiness(sandbox.client, "12345678");
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.POST("/verifications", { body: { customerId: business.id } });
    expect(foreign.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
    const { data } = await sandbox.client.POST("/verifications", {
      body: { customerId: business.id },
    });
    const hidden = await other.GET("/verifications/{verificationId}", {
      params: { path: { verificationId: data!.id } },
    });
    expect(hidden.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const list = await other.GET("/verifications", {});
    expect(list.data).toMatchObject({ data: [], totalCount: 0 });
  });

  for (const [lastName, kycStatus] of [
    ["Coyote001", "PENDING"],
    ["Coyote002", "REJECTED"],
    ["Coyote", "APPROVED"],
  ] as const) {
    it(`sets a beneficial owner's kycStatus ${kycStatus} for the last name ${lastName}`, async () => {
      const business = await createBusiness(sandbox.client, "55501234");
      const { data, response } = await sandbox.client.POST("/beneficial-owners", {
        body: {
          customerId: business.id,
          roles: ["UBO"],
          ownershipPercentage: 60,
          personalInfo: ownerInfo(lastName),
        },
      });
      expect(response.status).toBe(201);
      expect(data).toMatchObject({
        customerId: business.id,
        roles: ["UBO"],
        ownershipPercentage: 60,
        kycStatus,
        personalInfo: ownerInfo(lastName),
      });
      expect(data?.id).toMatch(/^BeneficialOwner:[0-9a-f-]{36}$/);
    });
  }

  it("lists, reads and updates beneficial owners of businesses only, per platform", async () => {
    const business = await createBusiness(sandbox.client, "55509876");
    const made: string[] = [];
    for (const lastName of ["Road", "Runner"]) {
      const { data } = await sandbox.client.POST("/beneficial-owners", {
        body: {
          customerId: business.id,
          roles: ["DIRECTOR"],
          ownershipPercentage: 30,
          personalInfo: ownerInfo(lastName),
        },
      });
      made.push(data!.id);
    }
    const list = await sandbox.client.GET("/beneficial-owners", {
      params: { query: { customerId: business.id } },
    });
    expect(list.data?.data.map((o) => o.id)).toEqual([...made].reverse());
    expect(list.data?.totalCount).toBe(2);

    const updated = await sandbox.client.PATCH("/beneficial-owners/{beneficialOwnerId}", {
      params: { path: { beneficialOwnerId: made[0]! } },
      body: { ownershipPercentage: 45, personalInfo: { lastName: "Road002" } },
    });
    expect(updated.data).toMatchObject({
      ownershipPercentage: 45,
      roles: ["DIRECTOR"],
      kycStatus: "REJECTED",
      personalInfo: { firstName: "Wile", lastName: "Road002" },
    });
    const got = await sandbox.client.GET("/beneficial-owners/{beneficialOwnerId}", {
      params: { path: { beneficialOwnerId: made[0]! } },
    });
    expect(got.data).toEqual(updated.data);

    const person = await createCustomer(sandbox.client);
    const notBusiness = await sandbox.client.POST("/beneficial-owners", {
      body: {
        customerId: person.id,
        roles: ["UBO"],
        ownershipPercentage: 100,
        personalInfo: ownerInfo("Solo"),
      },
    });
    expect(notBusiness.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const tooMuch = await sandbox.client.POST("/beneficial-owners", {
      body: {
        customerId: business.id,
        roles: ["UBO"],
        ownershipPercentage: 101,
        personalInfo: ownerInfo("Greedy"),
      },
    });
    expect(tooMuch.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });

    const other = await sandbox.otherPlatformClient();
    const hidden = await other.GET("/beneficial-owners/{beneficialOwnerId}", {
      params: { path: { beneficialOwnerId: made[0]! } },
    });
    expect(hidden.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const foreignPatch = await other.PATCH("/beneficial-owners/{beneficialOwnerId}", {
      params: { path: { beneficialOwnerId: made[0]! } },
      body: { ownershipPercentage: 1 },
    });
    expect(foreignPatch.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const foreignList = await other.GET("/beneficial-owners", {
      params: { query: { customerId: business.id } },
    });
    expect(foreignList.data).toMatchObject({ data: [], totalCount: 0 });
    const foreignCreate = await other.POST("/beneficial-owners", {
      body: {
        customerId: business.id,
        roles: ["UBO"],
        ownershipPercentage: 10,
        personalInfo: ownerInfo("Intruder"),
      },
    });
    expect(foreignCreate.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
  });
});
