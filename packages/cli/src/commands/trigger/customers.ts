import type { Schemas } from "@payments-sandbox/client";
import { KYB_TABLE } from "@payments-sandbox/sandbox-rules";
import { CliError, ok } from "../../context.js";
import {
  approvedName,
  customerWithAccount,
  digits,
  individual,
  nameWithKyc,
  type Flow,
  type FlowContext,
} from "./flow.js";

// Customers: KYC at creation and on the hosted KYC page, KYB and KYC
// submissions with POST /verifications, and CSV imports.

export const kyc: Flow = {
  summary: "a customer created with KYC PENDING, then approved on the hosted KYC page",
  events: ["CUSTOMER.KYC_PENDING", "CUSTOMER.KYC_APPROVED"],
  creates: { customer: "the customer: POST /customers" },
  async run(ctx) {
    const { api, out } = ctx;
    const { customer } = await customerWithAccount(
      ctx,
      individual(nameWithKyc("Kyc Applicant", "PENDING")),
    );
    const link = ok(
      "POST /customers/{customerId}/kyc-link",
      await api.POST("/customers/{customerId}/kyc-link", {
        params: { path: { customerId: customer.id } },
      }),
    );
    // The hosted page decides from the full name entered, as the table says.
    const page = await fetch(link.kycUrl, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ value: approvedName("Kyc Applicant") }).toString(),
      redirect: "manual",
    });
    if (!page.ok) throw new CliError(`the hosted KYC page answered ${page.status}`);
    const after = ok(
      "GET /customers/{customerId}",
      await api.GET("/customers/{customerId}", {
        params: { path: { customerId: customer.id } },
      }),
    );
    const status = after.customerType === "INDIVIDUAL" ? after.kycStatus : undefined;
    out.step(`• Submitted the hosted KYC page: KYC ${status}`);
    return { flow: "kyc", customerId: customer.id, kycStatus: status };
  },
};

export const kycRejected: Flow = {
  summary: "a customer whose KYC is rejected at creation",
  events: ["CUSTOMER.KYC_REJECTED"],
  creates: { customer: "the customer: POST /customers" },
  async run(ctx) {
    const { customer } = await customerWithAccount(
      ctx,
      individual(nameWithKyc("Kyc Applicant", "REJECTED")),
    );
    const status = customer.customerType === "INDIVIDUAL" ? customer.kycStatus : undefined;
    return { flow: "kyc-rejected", customerId: customer.id, kycStatus: status };
  },
};

async function verify(ctx: FlowContext, customerId: string) {
  const verification = ok(
    "POST /verifications",
    await ctx.api.POST("/verifications", {
      body: ctx.overrides.apply<Schemas["VerificationRequest"]>("verification", { customerId }),
    }),
  );
  ctx.out.step(`• Verification ${verification.id}: ${verification.verificationStatus}`);
  return verification;
}

export const verificationResolveErrors: Flow = {
  summary: "a customer's KYC submitted with an unreadable identity document: errors to resolve",
  events: ["VERIFICATION.RESOLVE_ERRORS"],
  creates: {
    customer: "the customer: POST /customers",
    verification: "the submission: POST /verifications",
  },
  async run(ctx) {
    const { customer } = await customerWithAccount(
      ctx,
      individual(nameWithKyc("Kyc Applicant", "UNVERIFIED")),
    );
    const verification = await verify(ctx, customer.id);
    return {
      flow: "verification-resolve-errors",
      customerId: customer.id,
      verificationId: verification.id,
      verificationStatus: verification.verificationStatus,
    };
  },
};

/** A flow for one row of the KYB table: a business, then its KYB submission. */
function kyb(flow: string, match: string | null): Flow {
  const row = KYB_TABLE.rows.find((r) => r.match === match) ?? KYB_TABLE.other;
  const status = row.outcome.kybStatus;
  const verification = status === "PENDING" ? "PENDING_MANUAL_REVIEW" : status;
  return {
    summary: `a business submitted for KYB whose registration number makes it ${status}`,
    events: [`VERIFICATION.${verification}`, `CUSTOMER.KYB_${status}`],
    creates: {
      customer: "the business: POST /customers",
      verification: "the submission: POST /verifications",
    },
    async run(ctx) {
      const registrationNumber = `REG-${digits(3)}${match ?? "000"}`;
      const { customer } = await customerWithAccount(ctx, {
        customerType: "BUSINESS",
        businessInfo: {
          legalName: "Cli Business Ltd",
          registrationNumber,
          country: "US",
          taxId: "84-2203117",
          incorporatedOn: "2019-06-01",
        },
      } as Schemas["CustomerCreateRequestOneOf"]);
      const submitted = await verify(ctx, customer.id);
      return {
        flow,
        customerId: customer.id,
        verificationId: submitted.id,
        verificationStatus: submitted.verificationStatus,
      };
    },
  };
}

export const kybApproved = kyb("kyb", null);
export const kybPending = kyb("kyb-pending", "001");
export const kybRejected = kyb("kyb-rejected", "002");

const CSV_HEADER =
  "platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country";

async function importCsv(ctx: FlowContext, flow: string, csv: string) {
  const { api, out } = ctx;
  const accepted = ok(
    "POST /customers/bulk/csv",
    await api.POST("/customers/bulk/csv", {
      body: { file: csv },
      bodySerializer: () => {
        const form = new FormData();
        form.append("file", new Blob([csv], { type: "text/csv" }), "customers.csv");
        return form;
      },
    }),
  );
  out.step(`• Import ${accepted.jobId} accepted: ${accepted.status}`);
  // The rows are made in the background: follow the job to its end.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = ok(
      "GET /customers/bulk/jobs/{jobId}",
      await api.GET("/customers/bulk/jobs/{jobId}", {
        params: { path: { jobId: accepted.jobId } },
      }),
    );
    if (job.status === "COMPLETED" || job.status === "FAILED") {
      out.step(`• Import ${job.id}: ${job.status}`);
      return { flow, jobId: job.id, status: job.status };
    }
    if (Date.now() > deadline) throw new CliError(`import ${job.id} still ${job.status} after 60s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export const bulkImport: Flow = {
  summary: "a CSV file of two customers imported in the background",
  events: ["BULK_UPLOAD.COMPLETED"],
  creates: {},
  async run(ctx) {
    const id = digits(6);
    const rows = [1, 2].map(
      (n) =>
        `cli-${id}-${n},INDIVIDUAL,${approvedName("Bulk Customer")},1990-01-15,1 Main St,Austin,TX,78701,US`,
    );
    return importCsv(ctx, "bulk-import", [CSV_HEADER, ...rows].join("\n"));
  },
};

export const bulkImportFailed: Flow = {
  summary: "a CSV file whose header lacks the required columns: the import fails as a whole",
  events: ["BULK_UPLOAD.FAILED"],
  creates: {},
  async run(ctx) {
    return importCsv(
      ctx,
      "bulk-import-failed",
      `platformCustomerId,fullName\ncli-${digits(6)},Nobody`,
    );
  },
};
