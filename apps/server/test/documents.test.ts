import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "@payments-sandbox/client";
import { DOCUMENT_MAX_BYTES } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createCustomer } from "./money-helpers.js";

// /documents: uploads reviewed by the sandbox as they arrive, by the file's
// content (type, size) and then its name (the document review table).

const PDF = Buffer.concat([Buffer.from("%PDF-1.7\n", "latin1"), Buffer.from([0xe2, 0xe3, 0xcf])]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46]);

interface Part {
  bytes: Buffer;
  name: string;
  type?: string;
}

/** The multipart body a partner's HTTP client sends: the file part and text parts. */
function form(file: Part | undefined, fields: Record<string, string>): FormData {
  const body = new FormData();
  if (file) {
    body.append(
      "file",
      new Blob([new Uint8Array(file.bytes)], { type: file.type ?? "application/octet-stream" }),
      file.name,
    );
  }
  for (const [key, value] of Object.entries(fields)) body.append(key, value);
  return body;
}

function upload(client: SandboxClient, file: Part | undefined, fields: Record<string, string>) {
  return client.POST("/documents", {
    body: {
      file: "",
      documentHolder: fields.documentHolder ?? "",
      documentType: "PASSPORT",
      country: "US",
    },
    bodySerializer: () => form(file, fields),
  });
}

describe.each(databases)("documents on %s", (kind) => {
  let sandbox: TestSandbox;
  let holder: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
    holder = (await createCustomer(sandbox.client, { lastName: "Papers" })).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const passport = (fields: Record<string, string> = {}) => ({
    documentHolder: holder,
    documentType: "PASSPORT",
    country: "US",
    ...fields,
  });

  it("accepts a PDF, JPEG or PNG and keeps its details, never its bytes", async () => {
    const files: Part[] = [
      { bytes: PDF, name: "passport.pdf", type: "application/pdf" },
      { bytes: JPEG, name: "licence-front.jpg" },
      { bytes: PNG, name: "scan.png", type: "image/png" },
    ];
    for (const file of files) {
      const { data, response, error } = await upload(
        sandbox.client,
        file,
        passport({ side: "FRONT", documentNumber: "X1234567", issuingAuthority: "State Dept" }),
      );
      expect(response.status, JSON.stringify(error)).toBe(201);
      expect(data).toEqual({
        id: expect.stringMatching(/^Document:[0-9a-f-]{36}$/),
        documentHolder: holder,
        documentType: "PASSPORT",
        side: "FRONT",
        country: "US",
        documentNumber: "X1234567",
        issuingAuthority: "State Dept",
        fileName: file.name,
        createdAt: expect.any(String),
        updatedAt: data!.createdAt,
      });
      const read = await sandbox.client.GET("/documents/{documentId}", {
        params: { path: { documentId: data!.id } },
      });
      expect(read.data).toEqual(data);
    }
  });

  it("refuses each review outcome of the table with its code, storing nothing", async () => {
    const before = await sandbox.client.GET("/documents", {
      params: { query: { documentHolder: holder } },
    });
    const cases = [
      ["passport001.pdf", "LOW_QUALITY"],
      ["passport002.pdf", "DATA_MISMATCH"],
      ["passport003.pdf", "EXPIRED"],
      ["passport004.pdf", "SUSPECTED_FRAUD"],
      ["passport005.pdf", "UNSUITABLE_DOCUMENT"],
      ["passport006.pdf", "INCOMPLETE"],
    ] as const;
    for (const [name, code] of cases) {
      const { response, error } = await upload(sandbox.client, { bytes: PDF, name }, passport());
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ status: 400, code, details: { fileName: name } });
    }
    const after = await sandbox.client.GET("/documents", {
      params: { query: { documentHolder: holder } },
    });
    expect(after.data!.totalCount).toBe(before.data!.totalCount);
  });

  it("refuses what is not a PDF, JPEG or PNG by its content, an empty file, and a file over 10 MB", async () => {
    const cases: Part[] = [
      { bytes: Buffer.from("just text"), name: "passport.pdf", type: "application/pdf" },
      { bytes: Buffer.from("GIF89a..."), name: "passport.gif" },
      { bytes: Buffer.alloc(0), name: "empty.pdf" },
      {
        bytes: Buffer.concat([PDF, Buffer.alloc(DOCUMENT_MAX_BYTES)]),
        name: "huge.pdf",
      },
    ];
    for (const file of cases) {
      const { response, error } = await upload(sandbox.client, file, passport());
      expect(response.status, file.name).toBe(400);
      expect(error).toMatchObject({ code: "INVALID_INPUT" });
    }
    const missing = await upload(sandbox.client, undefined, passport());
    expect(missing.response.status).toBe(400);
  });

  it("takes a business's beneficial owner as a holder", async () => {
    const business = await sandbox.client.POST("/customers", {
      body: {
        customerType: "BUSINESS",
        businessInfo: {
          legalName: "Paper Trail Ltd",
          country: "US",
          taxId: "84-2203119",
          incorporatedOn: "2021-03-01",
        },
      },
    });
    const owner = await sandbox.client.POST("/beneficial-owners", {
      body: {
        customerId: business.data!.id!,
        roles: ["UBO"],
        ownershipPercentage: 60,
        personalInfo: {
          firstName: "Wile",
          lastName: "Coyote",
          birthDate: "1949-09-17",
          nationality: "US",
          address: { line1: "1 Mesa Rd", postalCode: "85001", country: "US" },
          idType: "SSN",
          identifier: "123-45-6789",
        },
      },
    });
    expect(owner.response.status).toBe(201);
    const { data, response } = await upload(
      sandbox.client,
      { bytes: PDF, name: "owner-passport.pdf" },
      passport({ documentHolder: owner.data!.id }),
    );
    expect(response.status).toBe(201);
    expect(data!.documentHolder).toBe(owner.data!.id);
    const unknown = await upload(
      sandbox.client,
      { bytes: PDF, name: "owner-passport.pdf" },
      passport({ documentHolder: "BeneficialOwner:019542f5-b3e7-1d02-0000-000000000001" }),
    );
    expect(unknown.response.status).toBe(404);
  });

  it("answers 404 for a holder the platform does not have, and for another platform's document", async () => {
    const unknown = await upload(
      sandbox.client,
      { bytes: PDF, name: "passport.pdf" },
      passport({ documentHolder: "Customer:019542f5-b3e7-1d02-0000-000000000001" }),
    );
    expect(unknown.response.status).toBe(404);
    const mine = await upload(sandbox.client, { bytes: PDF, name: "passport.pdf" }, passport());
    const other = await sandbox.otherPlatformClient();
    const foreignRead = await other.GET("/documents/{documentId}", {
      params: { path: { documentId: mine.data!.id } },
    });
    expect(foreignRead.response.status).toBe(404);
    const foreignUpload = await upload(other, { bytes: PDF, name: "passport.pdf" }, passport());
    expect(foreignUpload.response.status).toBe(404);
    const list = await other.GET("/documents");
    expect(list.data!.data.map((d) => d.id)).not.toContain(mine.data!.id);
  });

  it("replaces a document after the same review, and leaves it as it was when refused", async () => {
    const { data: original } = await upload(
      sandbox.client,
      { bytes: PDF, name: "bill.pdf" },
      passport({ documentType: "UTILITY_BILL" }),
    );
    const replace = (file: Part, fields: Record<string, string>) =>
      sandbox.client.PUT("/documents/{documentId}", {
        params: { path: { documentId: original!.id } },
        body: { file: "", documentType: "UTILITY_BILL", country: "US" },
        bodySerializer: () => form(file, fields),
      });
    const refused = await replace(
      { bytes: PNG, name: "bill003.png" },
      { documentType: "UTILITY_BILL", country: "GB" },
    );
    expect(refused.response.status).toBe(400);
    expect(refused.error).toMatchObject({ code: "EXPIRED" });
    const kept = await sandbox.client.GET("/documents/{documentId}", {
      params: { path: { documentId: original!.id } },
    });
    expect(kept.data).toEqual(original);

    const { data, response } = await replace(
      { bytes: PNG, name: "bill-new.png" },
      { documentType: "BANK_STATEMENT", country: "GB" },
    );
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      id: original!.id,
      documentHolder: holder,
      documentType: "BANK_STATEMENT",
      country: "GB",
      fileName: "bill-new.png",
      createdAt: original!.createdAt,
    });
  });

  it("lists newest first by holder, with the total, and pages", async () => {
    const owner = (await createCustomer(sandbox.client, { lastName: "Lister" })).id;
    const ids: string[] = [];
    for (const name of ["a.pdf", "b.pdf", "c.pdf"]) {
      const { data } = await upload(
        sandbox.client,
        { bytes: PDF, name },
        passport({ documentHolder: owner }),
      );
      ids.push(data!.id);
    }
    const first = await sandbox.client.GET("/documents", {
      params: { query: { documentHolder: owner, limit: 2 } },
    });
    expect(first.data).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(first.data!.data.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    const rest = await sandbox.client.GET("/documents", {
      params: { query: { documentHolder: owner, limit: 2, cursor: first.data!.nextCursor! } },
    });
    expect(rest.data!.data.map((d) => d.id)).toEqual([ids[0]]);
  });

  it("deletes a document, but not one already submitted for verification (409)", async () => {
    const { data: doc } = await upload(sandbox.client, { bytes: PDF, name: "id.pdf" }, passport());
    const gone = await sandbox.client.DELETE("/documents/{documentId}", {
      params: { path: { documentId: doc!.id } },
    });
    expect(gone.response.status).toBe(204);
    const read = await sandbox.client.GET("/documents/{documentId}", {
      params: { path: { documentId: doc!.id } },
    });
    expect(read.response.status).toBe(404);

    // 001: KYC pending, so a verification can be submitted.
    const submittedHolder = (await createCustomer(sandbox.client, { lastName: "Sent001" })).id;
    const { data: sent } = await upload(
      sandbox.client,
      { bytes: PDF, name: "id.pdf" },
      passport({ documentHolder: submittedHolder }),
    );
    const verification = await sandbox.client.POST("/verifications", {
      body: { customerId: submittedHolder },
    });
    expect(verification.response.status).toBe(200);
    const refused = await sandbox.client.DELETE("/documents/{documentId}", {
      params: { path: { documentId: sent!.id } },
    });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: "CONFLICT" });
  });
});
