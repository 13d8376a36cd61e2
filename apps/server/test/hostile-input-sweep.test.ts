import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createCustomer } from "./money-helpers.js";
import {
  MAX_SAFE,
  holds,
  hostileInputSteps,
  integerFields,
  operations,
  outOfRange,
  rawRequest,
  urlOf,
  withValueAt,
} from "./support/hostile-input.js";

// Each class of hostile input, sent to every operation of openapi.yaml that
// takes it: integers out of range, JSON bodies that are empty or not UTF-8,
// queries that are not UTF-8, unreadable multipart bodies (webhook URLs that
// are not URLs and requests Node itself refuses are in
// hostile-input-edges.test.ts). Every answer is a 4xx in the Error shape, and
// the database holds exactly what it held before.

const ops = operations();
const jsonOps = ops.filter((op) => op.jsonExample !== undefined);

describe("openapi.yaml bounds every integer a request takes", () => {
  it("declares a maximum of at most 2^53 - 1 on each, the largest the sandbox represents exactly", () => {
    const fields = ops.flatMap(integerFields);
    expect(fields.length).toBeGreaterThan(50);
    const unbounded = fields
      .filter((f) => f.maximum === undefined || f.maximum > MAX_SAFE)
      .map((f) => `${f.op.method} ${f.op.path} ${f.in}:${f.path}`);
    expect(unbounded).toEqual([]);
  });
});

describe.each(databases)("hostile input to every operation on %s", (kind) => {
  let sandbox: TestSandbox;
  let authorization: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { hostileRequests: true });
    const { tokenId, secret } = sandbox.credentials;
    authorization = `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { expectRefusedWithoutWrites, expectErrorObject, fetchOp } = hostileInputSteps(
    () => sandbox,
  );

  it("refuses every integer out of its range with 400 naming the field, and writes nothing", async () => {
    const fields = ops.flatMap(integerFields);
    await expectRefusedWithoutWrites(async () => {
      for (const field of fields) {
        for (const value of outOfRange(field)) {
          const what = `${field.op.method} ${field.op.path} ${field.path}=${value}`;
          const { status, text } =
            field.in === "query"
              ? await fetchOp(field.op, `${urlOf(field.op)}?${field.path}=${value}`)
              : await fetchOp(
                  field.op,
                  urlOf(field.op),
                  JSON.stringify(withValueAt(field.op.jsonExample, field.path, "@@N@@")).replace(
                    '"@@N@@"',
                    value,
                  ),
                );
          const body = expectErrorObject(status, text, what) as {
            details?: { errors?: { field: string }[] };
          };
          // A platform's token never reaches an agent's operation: 401 comes first.
          if (field.op.agentOnly) continue;
          expect(status, what).toBe(400);
          // In a valid example, the one thing wrong is the field. (The validator
          // reports one error: a field the example lacks comes in a container
          // that may lack others.)
          const alone =
            field.in === "query"
              ? field.op.requiredQuery.every((name) => name === field.path)
              : holds(field.op.jsonExample, field.path);
          if (alone) {
            expect(body.details?.errors?.[0]?.field, what).toBe(field.path.replace(/\[\]/g, ".0"));
          }
        }
      }
    });
  }, 300_000);

  it("answers a JSON body that is empty or absent with a 4xx on every operation that takes one", async () => {
    const { origin } = sandbox.server;
    await expectRefusedWithoutWrites(async () => {
      for (const op of jsonOps) {
        const target = `/2025-10-13${urlOf(op)}`;
        for (const framing of ["", "Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n"]) {
          const end = framing.startsWith("Transfer") ? "0\r\n\r\n" : "";
          const answer = await rawRequest(
            origin,
            `${op.method} ${target} HTTP/1.1\r\nHost: sandbox\r\nAuthorization: ${authorization}\r\n` +
              `Content-Type: application/json\r\nConnection: close\r\n${framing}\r\n${end}`,
          );
          const what = `${op.method} ${op.path} [${framing.trim()}]`;
          const refusal = expectErrorObject(answer.status, answer.body, what) as {
            details?: { errors?: { field: string }[] };
          };
          if (op.agentOnly || !op.bodyRequired) continue;
          expect(answer.status, what).toBe(400);
          expect(refusal.details?.errors?.[0]?.field, what).toBe("body");
        }
      }
    });
  }, 300_000);

  it("refuses a JSON body that is not UTF-8 with 400 on every operation that takes one", async () => {
    await expectRefusedWithoutWrites(async () => {
      for (const op of jsonOps) {
        const text = JSON.stringify(op.jsonExample);
        // A byte that is never UTF-8 inside the first string, or in a string of its own.
        const quote = text.indexOf('"', 1);
        const bytes =
          text.startsWith("{") && quote > 0
            ? Buffer.concat([
                Buffer.from(text.slice(0, quote)),
                Buffer.from([0xff]),
                Buffer.from(text.slice(quote)),
              ])
            : Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
        const what = `${op.method} ${op.path}`;
        // Read directly, and (compressed) by the general reader.
        for (const [sent, headers] of [
          [bytes, {}],
          [gzipSync(bytes), { "Content-Encoding": "gzip" }],
        ] as const) {
          const res = await fetchOp(op, urlOf(op), sent, headers);
          const body = expectErrorObject(res.status, res.text, what);
          if (op.agentOnly) continue;
          expect(res.status, what).toBe(400);
          expect(body).toMatchObject({
            code: "INVALID_INPUT",
            message: expect.stringMatching(/UTF-8/),
          });
        }
      }
    });
  }, 300_000);

  it("refuses a query that is not percent-encoded UTF-8 with 400 on every operation that takes one", async () => {
    const withQuery = ops.filter((op) => op.queryParams.length > 0);
    expect(withQuery.length).toBeGreaterThan(20);
    await expectRefusedWithoutWrites(async () => {
      for (const op of withQuery) {
        for (const bad of ["%ff", "%c3%28", "a%e2%82", "%zz"]) {
          const res = await fetchOp(op, `${urlOf(op)}?${op.queryParams[0]}=${bad}`);
          const what = `${op.method} ${op.path}?${op.queryParams[0]}=${bad}`;
          const body = expectErrorObject(res.status, res.text, what) as {
            details?: { errors?: { field: string }[] };
          };
          expect(res.status, what).toBe(400);
          expect(body.details?.errors?.[0]?.field, what).toBe("query");
        }
      }
    });
  }, 300_000);

  describe("multipart bodies", () => {
    const BOUNDARY = "hostile-boundary";
    const multipartOps = () => ops.filter((op) => op.multipart);

    function part(name: string, value: string, fileName?: string): string {
      const disposition = `form-data; name="${name}"${fileName !== undefined ? `; filename="${fileName}"` : ""}`;
      const type = fileName !== undefined ? "Content-Type: text/csv\r\n" : "";
      return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n${value}\r\n`;
    }

    it("finds the three operations that take one", () => {
      expect(
        multipartOps()
          .map((op) => `${op.method} ${op.path}`)
          .sort(),
      ).toEqual(["POST /customers/bulk/csv", "POST /documents", "PUT /documents/{documentId}"]);
    });

    it("refuses malformed, truncated and NUL-carrying bodies with 400 and stores nothing", async () => {
      const customer = await createCustomer(sandbox.client);
      const fields =
        part("customerId", customer.id) + part("documentType", "PASSPORT") + part("country", "US");
      const bodies: [string, string][] = [
        [
          "a malformed part header",
          `--${BOUNDARY}\r\nbroken header\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
        ],
        [
          "a body cut short",
          `${fields}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF`,
        ],
        ["no closing boundary", `${fields}${part("file", "%PDF-1.4", "a.pdf")}`],
        [
          "NUL in a file name",
          `${fields}${part("file", "%PDF-1.4", "a\u0000.pdf")}--${BOUNDARY}--\r\n`,
        ],
        [
          "NUL in a text part",
          `${part("customerId", customer.id)}${part("documentType", "PASS\u0000PORT")}${part("country", "U\u0000S")}${part("file", "%PDF-1.4", "a.pdf")}--${BOUNDARY}--\r\n`,
        ],
        [
          "NUL in a CSV file",
          `${part("file", "fullName,email\nAda\u0000 Lovelace,ada@example.com\n", "c.csv")}--${BOUNDARY}--\r\n`,
        ],
        [
          "a CSV file that is not UTF-8",
          `${part("file", "fullName\nAd\u00ff\n", "c.csv")}--${BOUNDARY}--\r\n`,
        ],
      ];
      await expectRefusedWithoutWrites(async () => {
        for (const op of multipartOps()) {
          for (const [what, body] of bodies) {
            // Written as latin1: one byte per character, so `\u00ff` is the byte 0xff.
            const res = await fetchOp(op, urlOf(op), Buffer.from(body, "latin1"), {
              "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`,
            });
            const label = `${op.method} ${op.path}: ${what}`;
            const answer = expectErrorObject(res.status, res.text, label);
            expect(res.status, label).toBe(400);
            expect(answer.code, label).toBe("INVALID_INPUT");
          }
        }
      });
    });
  });
});
