import type { Schemas } from "@payments-sandbox/client";
import { DOCUMENT_MAX_BYTES, documentReviewOutcome } from "@payments-sandbox/sandbox-rules";
import { sha256Hex } from "../../crypto/sha256.js";
import { insert, one, q, run, type Row } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { fileBytes } from "../../http/operations.js";
import type { RequestContext, Services } from "../../http/context.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import type { BeneficialOwnerService } from "../beneficial-owners/service.js";
import type { CustomerService } from "../customers/service.js";

// Verification documents (/documents). Each file is reviewed as it arrives:
// its content must be a PDF, JPEG or PNG within the size limit, then the
// sandbox's review table (packages/sandbox-rules) decides by the file's name.
// Only what the file was is kept (name, type, size, digest), never its bytes.

export type Document = Schemas["Document"];
type DocumentRow = Row<"Document">;
export type DocumentUpload = Schemas["DocumentUploadRequest"];
export type DocumentReplacement = Schemas["DocumentReplaceRequest"];
export type DocumentFilter = Query<"listDocuments">;

/** The file types taken, by the bytes each starts with. */
const SIGNATURES: readonly { type: string; magic: Buffer }[] = [
  { type: "application/pdf", magic: Buffer.from("%PDF-", "latin1") },
  { type: "image/jpeg", magic: Buffer.from([0xff, 0xd8, 0xff]) },
  { type: "image/png", magic: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
];

export function toDocument(row: DocumentRow): Document {
  return {
    id: row.id,
    documentHolder: row.documentHolder,
    documentType: row.documentType as Document["documentType"],
    ...(row.side !== null ? { side: row.side as NonNullable<Document["side"]> } : {}),
    country: row.country,
    ...(row.documentNumber !== null ? { documentNumber: row.documentNumber } : {}),
    ...(row.issuingAuthority !== null ? { issuingAuthority: row.issuingAuthority } : {}),
    fileName: row.fileName,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** What a reviewed file leaves on its document row. */
interface ReviewedFile {
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** The checks and the sandbox's review of one file; throws the refusal. */
function review(file: string, fileName: string | undefined): ReviewedFile {
  const bytes = fileBytes(file);
  const name = fileName ?? "";
  if (bytes.length === 0) {
    throw invalidInput("The file is empty", { errors: [fieldError("body.file", "empty")] });
  }
  if (bytes.length > DOCUMENT_MAX_BYTES) {
    throw invalidInput(`A document is at most ${DOCUMENT_MAX_BYTES} bytes`, {
      errors: [fieldError("body.file", "too large")],
    });
  }
  const kind = SIGNATURES.find((s) => bytes.subarray(0, s.magic.length).equals(s.magic));
  if (!kind) {
    throw invalidInput("A document must be a PDF, JPEG or PNG file", {
      errors: [fieldError("body.file", "not a PDF, JPEG or PNG file")],
    });
  }
  const stem = name.includes(".") ? name.slice(0, name.lastIndexOf(".")) : name;
  const outcome = documentReviewOutcome(stem).outcome;
  if (outcome.kind === "REJECT") {
    throw new ApiError(outcome.status, outcome.errorCode, outcome.message, {
      details: { fileName: name },
    });
  }
  return {
    fileName: name,
    contentType: kind.type,
    size: bytes.length,
    sha256: sha256Hex(bytes),
  };
}

/** The details every upload and replacement carries, as stored. */
function detailsOf(input: DocumentReplacement) {
  return {
    documentType: input.documentType,
    side: input.side ?? null,
    country: input.country,
    documentNumber: input.documentNumber ?? null,
    issuingAuthority: input.issuingAuthority ?? null,
  };
}

export class DocumentService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    private readonly beneficialOwners: BeneficialOwnerService,
  ) {}

  async upload(
    ctx: RequestContext,
    input: DocumentUpload,
    fileName: string | undefined,
  ): Promise<Document> {
    await this.requireHolder(ctx, input.documentHolder);
    const file = review(input.file, fileName);
    const now = ctx.clock.now();
    const row: DocumentRow = {
      id: newId("Document"),
      platformId: ctx.platformId,
      documentHolder: input.documentHolder,
      ...detailsOf(input),
      ...file,
      createdAt: now,
      updatedAt: now,
    };
    await this.services.data.transaction(() => insert("Document", row));
    return toDocument(row);
  }

  async list(
    ctx: RequestContext,
    filter: DocumentFilter,
  ): Promise<Page<Document> & { totalCount: number }> {
    let query = q.selectFrom("Document").where("platformId", "=", ctx.platformId);
    if (filter.documentHolder) query = query.where("documentHolder", "=", filter.documentHolder);
    return newestCountedPage(this.services.data, query, filter, toDocument);
  }

  async get(ctx: RequestContext, id: string): Promise<Document> {
    return toDocument(await this.getRow(ctx, id));
  }

  async replace(
    ctx: RequestContext,
    id: string,
    input: DocumentReplacement,
    fileName: string | undefined,
  ): Promise<Document> {
    await this.getRow(ctx, id);
    const file = review(input.file, fileName);
    const changes = { ...detailsOf(input), ...file, updatedAt: ctx.clock.now() };
    const row = await this.services.data.transaction(() =>
      one(
        q
          .updateTable("Document")
          .set(changes)
          .where("id", "=", id)
          .where("platformId", "=", ctx.platformId)
          .returningAll(),
      ),
    );
    if (!row) throw documentNotFound(id);
    return toDocument(row);
  }

  async delete(ctx: RequestContext, id: string): Promise<void> {
    const row = await this.getRow(ctx, id);
    const deleted = await this.services.data.transaction(function* () {
      // Submitted for verification: its holder has a verification made since.
      const submitted = yield* one(
        q
          .selectFrom("Verification")
          .select("id")
          .where("platformId", "=", ctx.platformId)
          .where("customerId", "=", row.documentHolder)
          .where("createdAt", ">=", row.createdAt),
      );
      if (submitted) return false;
      yield* run(
        q.deleteFrom("Document").where("id", "=", id).where("platformId", "=", ctx.platformId),
      );
      return true;
    });
    if (!deleted) {
      throw new ApiError(
        409,
        "CONFLICT",
        `Document ${id} was submitted for verification (${row.documentHolder}) and cannot be deleted`,
      );
    }
  }

  private async getRow(ctx: RequestContext, id: string): Promise<DocumentRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("Document")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw documentNotFound(id);
    return row;
  }

  /** A customer (not deleted) or beneficial owner of this platform; 404 otherwise. */
  private async requireHolder(ctx: RequestContext, holder: string): Promise<void> {
    if (holder.startsWith("BeneficialOwner:")) await this.beneficialOwners.get(ctx, holder);
    else await this.customers.getActiveRow(ctx, holder);
  }
}

function documentNotFound(id: string): ApiError {
  return notFound("REFERENCE_NOT_FOUND", `Document ${id} not found`);
}
