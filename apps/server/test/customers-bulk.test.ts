import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient, Schemas } from "@payments-sandbox/client";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { eventsAbout, waitFor } from "./money-helpers.js";

type Job = Schemas["BulkCustomerImportJob"];

const HEADER =
  "umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country,email,businessLegalName,businessTaxId";

/** POSTs `csv` as the `file` part of a multipart body, as a partner's HTTP client would. */
function upload(client: SandboxClient, csv: string | undefined) {
  return client.POST("/customers/bulk/csv", {
    body: { file: csv ?? "" },
    bodySerializer: () => {
      const form = new FormData();
      if (csv !== undefined) {
        form.append("file", new Blob([csv], { type: "text/csv" }), "customers.csv");
      }
      return form;
    },
  });
}

describe.each(databases)("bulk customer import on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { env: { JOB_POLL_MS: "50" } });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function ended(jobId: string): Promise<Job> {
    let job: Job | undefined;
    await waitFor(async () => {
      const { data } = await sandbox.client.GET("/customers/bulk/jobs/{jobId}", {
        params: { path: { jobId } },
      });
      job = data;
      return data?.status === "COMPLETED" || data?.status === "FAILED";
    });
    return job!;
  }

  async function customerWith(platformCustomerId: string) {
    const { data } = await sandbox.client.GET("/customers", {
      params: { query: { platformCustomerId } },
    });
    return data?.data[0];
  }

  it("creates each row as POST /customers would, and reports the rows that fail", async () => {
    const csv = [
      HEADER,
      "john.doe@uma.example,bulk-ind-1,INDIVIDUAL,John Doe,1990-01-15,123 Main St,San Francisco,CA,94105,US,john@example.com,,",
      ",bulk-ind-2,INDIVIDUAL,Jane Roe 002,1985-06-01,1 Elm St,Austin,TX,78701,US,,,",
      ",bulk-ind-3,INDIVIDUAL,Bad Date,15/01/1990,1 Oak St,Austin,TX,78701,US,,,",
      ",bulk-biz-1,BUSINESS,,,400 Commerce Way,Austin,TX,78701,US,,Acme Inc,12-3456789",
      ",bulk-ind-1,INDIVIDUAL,John Again,1990-01-15,123 Main St,San Francisco,CA,94105,US,,,",
    ].join("\n");
    const accepted = await upload(sandbox.client, csv);
    expect(accepted.response.status).toBe(202);
    expect(accepted.data).toMatchObject({ status: "PENDING" });
    expect(accepted.data?.jobId).toMatch(/^BulkImportJob:/);

    const job = await ended(accepted.data!.jobId);
    expect(job).toMatchObject({
      id: accepted.data!.jobId,
      status: "COMPLETED",
      progress: { total: 5, processed: 5, successful: 3, failed: 2 },
    });
    expect(job.completedAt).toBeDefined();
    expect(job.errors).toEqual([
      expect.objectContaining({
        correlationId: "bulk-ind-3",
        code: "INVALID_INPUT",
        details: { column: "birthDate" },
      }),
      expect.objectContaining({ correlationId: "bulk-ind-1", code: "CONFLICT" }),
    ]);

    const john = await customerWith("bulk-ind-1");
    expect(john).toMatchObject({
      customerType: "INDIVIDUAL",
      fullName: "John Doe",
      umaAddress: "$john.doe@uma.example",
      email: "john@example.com",
      address: { line1: "123 Main St", city: "San Francisco", postalCode: "94105", country: "US" },
      kycStatus: "APPROVED",
    });
    // The same sandbox KYC outcomes as POST /customers: suffix 002 is REJECTED.
    expect(await customerWith("bulk-ind-2")).toMatchObject({ kycStatus: "REJECTED" });
    expect(await customerWith("bulk-biz-1")).toMatchObject({
      customerType: "BUSINESS",
      businessInfo: { legalName: "Acme Inc", taxId: "12-3456789" },
    });
    expect(await customerWith("bulk-ind-3")).toBeUndefined();
    // Accounts come with each customer, as for any other.
    const accounts = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId: john!.id! } },
    });
    expect(accounts.data?.data).toHaveLength(1);

    const events = await eventsAbout(sandbox.server.data, job.id);
    expect(events).toEqual([{ type: "BULK_UPLOAD.COMPLETED", data: job }]);
  });

  it("fails a file whose header lacks a required column as a whole", async () => {
    const accepted = await upload(sandbox.client, "customerType,fullName\nINDIVIDUAL,No Id\n");
    expect(accepted.response.status).toBe(202);
    const job = await ended(accepted.data!.jobId);
    expect(job).toMatchObject({
      status: "FAILED",
      progress: { processed: 0, successful: 0 },
      errors: [expect.objectContaining({ correlationId: "file", code: "INVALID_INPUT" })],
    });
    const events = await eventsAbout(sandbox.server.data, job.id);
    expect(events.map((e) => e.type)).toEqual(["BULK_UPLOAD.FAILED"]);
  });

  it("refuses a request without a file, an empty file, one over 1000 rows and one over 1 MB with 400", async () => {
    expect((await upload(sandbox.client, undefined)).error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
    });
    expect((await upload(sandbox.client, "  \n")).error).toMatchObject({ status: 400 });
    const rows = Array.from(
      { length: 1001 },
      (_, i) => `,many-${i},INDIVIDUAL,Many Rows,1990-01-01,1 St,City,ST,00000,US,,,`,
    );
    const tooMany = await upload(sandbox.client, [HEADER, ...rows].join("\n"));
    expect(tooMany.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect(await customerWith("many-0")).toBeUndefined();
    // Over 1 MB, even in few rows (other uploads may be larger, a CSV may not).
    const big = `${HEADER}\n,big-0,INDIVIDUAL,${"B".repeat(1024 * 1024)},1990-01-01,1 St,City,ST,00000,US,,,`;
    const tooBig = await upload(sandbox.client, big);
    expect(tooBig.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { errors: [{ field: "file", message: "too large" }] },
    });
    expect(await customerWith("big-0")).toBeUndefined();
  });

  it("hides a job from other platforms", async () => {
    const accepted = await upload(sandbox.client, `${HEADER}\n`);
    const other = await sandbox.otherPlatformClient();
    const read = await other.GET("/customers/bulk/jobs/{jobId}", {
      params: { path: { jobId: accepted.data!.jobId } },
    });
    expect(read.error).toMatchObject({ status: 404, code: "BULK_UPLOAD_JOB_NOT_FOUND" });
  });
});
