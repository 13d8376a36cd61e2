import { isUtf8 } from "node:buffer";
import { fileBytes } from "../../http/operations.js";
import type { Schemas } from "@payments-sandbox/client";
import { parse } from "csv-parse/sync";
import { found, insert, one, q, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { scheduleJob } from "../../jobs/schedule.js";
import type { CustomerCreate, CustomerService } from "./service.js";

// POST /customers/bulk/csv: the file is checked and stored, and a job creates
// its rows one by one through CustomerService.create, exactly as
// POST /customers would; a row that fails is recorded and the others go on.

type Job = Schemas["BulkCustomerImportJob"];
type JobRow = Row<"BulkImportJob">;
type ErrorEntry = Schemas["BulkCustomerImportErrorEntry"];

const IMPORT_JOB = "bulk-customer-import";
export const MAX_ROWS = 1000;
/** The largest CSV file taken, in bytes (other uploads, such as documents, may be larger). */
export const MAX_CSV_BYTES = 1024 * 1024;

const ADDRESS_COLUMNS = ["addressLine1", "city", "state", "postalCode", "country"] as const;
const REQUIRED_COLUMNS = {
  common: ["platformCustomerId", "customerType"],
  INDIVIDUAL: ["fullName", "birthDate", ...ADDRESS_COLUMNS],
  BUSINESS: ["businessLegalName", ...ADDRESS_COLUMNS],
} as const;

type CsvRow = Record<string, string>;

export function toJob(row: JobRow): Job {
  return {
    id: row.id,
    status: row.status as Job["status"],
    progress: {
      total: row.total,
      processed: row.processed,
      successful: row.successful,
      failed: row.failed,
    },
    errors: JSON.parse(row.errors) as ErrorEntry[],
    ...(row.completedAt !== null ? { completedAt: row.completedAt.toISOString() } : {}),
  };
}

/** The file's rows, or why it cannot be read at all. */
function readCsv(text: string): { rows: CsvRow[] } | { problem: string } {
  let rows: CsvRow[];
  try {
    rows = parse(text, {
      columns: true,
      skip_empty_lines: true,
      trim: true,
      bom: true,
    }) as CsvRow[];
  } catch (err) {
    return { problem: `the file is not valid CSV: ${(err as Error).message}` };
  }
  const header = rows.length > 0 ? Object.keys(rows[0]!) : [];
  const missing = REQUIRED_COLUMNS.common.filter((column) => !header.includes(column));
  if (missing.length > 0) return { problem: `the header lacks ${missing.join(", ")}` };
  return { rows };
}

/** A row as the request POST /customers would have received, or why it cannot be one. */
function customerOf(row: CsvRow): CustomerCreate | { column: string; problem: string } {
  const type = row["customerType"];
  if (type !== "INDIVIDUAL" && type !== "BUSINESS") {
    return { column: "customerType", problem: "customerType must be INDIVIDUAL or BUSINESS" };
  }
  for (const column of REQUIRED_COLUMNS[type]) {
    if (!row[column]) return { column, problem: `${column} is required for ${type} customers` };
  }
  if (!/^[A-Z]{2}$/.test(row["country"] ?? "")) {
    return { column: "country", problem: "country must be an ISO 3166-1 alpha-2 code" };
  }
  const address = {
    line1: row["addressLine1"]!,
    ...(row["addressLine2"] ? { line2: row["addressLine2"] } : {}),
    city: row["city"]!,
    state: row["state"]!,
    postalCode: row["postalCode"]!,
    country: row["country"]!,
  };
  const uma = row["umaAddress"];
  const common = {
    platformCustomerId: row["platformCustomerId"]!,
    ...(uma ? { umaAddress: uma.startsWith("$") ? uma : `$${uma}` } : {}),
    address,
  };
  if (type === "INDIVIDUAL") {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(row["birthDate"]!)) {
      return { column: "birthDate", problem: "birthDate must be YYYY-MM-DD" };
    }
    const email = row["email"];
    if (email && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) {
      return { column: "email", problem: "email is not an email address" };
    }
    return {
      customerType: "INDIVIDUAL",
      ...common,
      fullName: row["fullName"]!,
      birthDate: row["birthDate"]!,
      ...(email ? { email } : {}),
    };
  }
  // The CSV's business columns are fewer than POST /customers requires (no
  // incorporation date, an optional tax id): the row is created with what it
  // has, and the rest is added later with PATCH, as for any business whose
  // KYB is still to come.
  const business = {
    customerType: "BUSINESS",
    ...common,
    businessInfo: {
      legalName: row["businessLegalName"]!,
      country: address.country,
      ...(row["businessRegistrationNumber"]
        ? { registrationNumber: row["businessRegistrationNumber"] }
        : {}),
      ...(row["businessTaxId"] ? { taxId: row["businessTaxId"] } : {}),
    },
  };
  return business as CustomerCreate;
}

/** Ends the job with `status`, and tells the platform. */
function* finish(job: JobRow, status: "COMPLETED" | "FAILED", at: Date): SqlProgram<void> {
  const ended = yield* found(
    q
      .updateTable("BulkImportJob")
      .set({
        status,
        csv: null,
        total: job.total,
        processed: job.processed,
        successful: job.successful,
        failed: job.failed,
        errors: job.errors,
        completedAt: at,
        updatedAt: at,
      })
      .where("id", "=", job.id)
      .where("platformId", "=", job.platformId)
      .returningAll(),
    `bulk import job ${job.id}`,
  );
  yield* emitEvent({
    platformId: job.platformId,
    type: status === "COMPLETED" ? "BULK_UPLOAD.COMPLETED" : "BULK_UPLOAD.FAILED",
    objectId: job.id,
    data: toJob(ended),
    at,
  });
}

export class BulkCustomerImport {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  registerJobs(handlers: JobHandlers): void {
    handlers.register(IMPORT_JOB, (job, tools) => this.run(job, tools));
  }

  /** Accepts the file; its rows are created by the job. */
  async upload(
    ctx: RequestContext,
    file: string,
  ): Promise<Schemas["BulkCustomerImportJobAccepted"]> {
    const bytes = fileBytes(file);
    if (bytes.length > MAX_CSV_BYTES) {
      throw invalidInput(`A file is at most ${MAX_CSV_BYTES} bytes, not ${bytes.length}`, {
        errors: [fieldError("body.file", "too large")],
      });
    }
    // Decoding would turn bytes that are not UTF-8 into U+FFFD in silence.
    if (!isUtf8(bytes)) {
      throw invalidInput("The file is not UTF-8 text", {
        errors: [fieldError("body.file", "not valid UTF-8")],
      });
    }
    const csv = bytes.toString("utf8");
    // Its values become customers' fields, which no database stores with NUL.
    if (csv.includes("\0")) {
      throw invalidInput("The file contains the NUL character (U+0000)", {
        errors: [fieldError("body.file", "must not contain the NUL character (U+0000)")],
      });
    }
    if (csv.trim() === "") {
      throw invalidInput("The file part is empty", { errors: [fieldError("body.file", "empty")] });
    }
    const read = readCsv(csv);
    const rows = "rows" in read ? read.rows.length : 0;
    if (rows > MAX_ROWS) {
      throw invalidInput(`A file holds at most ${MAX_ROWS} rows, not ${rows}`, {
        errors: [fieldError("body.file", `more than ${MAX_ROWS} rows`)],
      });
    }
    const at = ctx.clock.now();
    const job: JobRow = {
      id: newId("BulkImportJob"),
      platformId: ctx.platformId,
      status: "PENDING",
      csv,
      total: rows,
      processed: 0,
      successful: 0,
      failed: 0,
      errors: "[]",
      completedAt: null,
      createdAt: at,
      updatedAt: at,
    };
    const realNow = this.services.clock.now();
    await this.services.data.transaction(function* () {
      yield* insert("BulkImportJob", job);
      yield* scheduleJob({
        platformId: ctx.platformId,
        kind: IMPORT_JOB,
        payload: { jobId: job.id },
        delaySeconds: 0,
        now: realNow,
      });
    });
    return { jobId: job.id, status: "PENDING" };
  }

  async get(ctx: RequestContext, id: string): Promise<Job> {
    const row = await this.services.data.one(
      q
        .selectFrom("BulkImportJob")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("BULK_UPLOAD_JOB_NOT_FOUND", `No bulk import job ${id}`);
    return toJob(row);
  }

  /** Creates each row's customer; safe to run again after a crash (it skips ended jobs). */
  private async run(due: DueJob, tools: JobTools): Promise<void> {
    const { jobId } = due.payload as { jobId: string };
    const job = await tools.data.one(
      q
        .selectFrom("BulkImportJob")
        .selectAll()
        .where("id", "=", jobId)
        .where("platformId", "=", due.platformId),
    );
    if (!job || job.csv === null || job.status === "COMPLETED" || job.status === "FAILED") return;
    const ctx: RequestContext = {
      platformId: job.platformId,
      tokenId: job.id,
      clock: tools.clock,
      log: tools.log,
    };
    const read = readCsv(job.csv);
    if ("problem" in read) {
      const errors: ErrorEntry[] = [
        { correlationId: "file", code: "INVALID_INPUT", message: read.problem },
      ];
      await tools.data.transaction(() =>
        finish({ ...job, errors: JSON.stringify(errors) }, "FAILED", tools.clock.now()),
      );
      return;
    }
    await tools.data.transaction(() =>
      one(
        q
          .updateTable("BulkImportJob")
          .set({ status: "PROCESSING", updatedAt: tools.clock.now() })
          .where("id", "=", job.id)
          .returning("id"),
      ),
    );
    const errors: ErrorEntry[] = [];
    let successful = 0;
    for (const [index, row] of read.rows.entries()) {
      const correlationId = row["platformCustomerId"] || `row ${index + 2}`;
      const input = customerOf(row);
      try {
        if ("problem" in input) {
          throw invalidInput(input.problem, { column: input.column });
        }
        await this.customers.create(ctx, input);
        successful += 1;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        errors.push({
          correlationId,
          code: err.code,
          message: err.message,
          ...(err.details ? { details: err.details } : {}),
        });
      }
    }
    const done = {
      ...job,
      processed: read.rows.length,
      successful,
      failed: errors.length,
      errors: JSON.stringify(errors),
    };
    await tools.data.transaction(() => finish(done, "COMPLETED", tools.clock.now()));
  }
}
