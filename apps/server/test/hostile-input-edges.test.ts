import { createServer, type Server } from "node:http";
import { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { balanceOf, createAccount, createBankAccount, createCustomer } from "./money-helpers.js";
import { hostileInputSteps, rawRequest } from "./support/hostile-input.js";

// Hostile input at the edges of the API, as in hostile-input-sweep.test.ts:
// webhook URLs the sandbox would call, requests Node refuses before the
// router, and the amounts the issue found answered with 500. Every answer is
// a 4xx in the Error shape, and the database holds what it held before.

describe.each(databases)("hostile input to every operation on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { hostileRequests: true });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { expectRefusedWithoutWrites } = hostileInputSteps(() => sandbox);

  describe("webhook endpoints", () => {
    const BAD = [
      "http://example.com/\thook",
      "http://example.com/hook\r\nX-Injected: 1",
      " http://example.com/hook",
      "http://example.com/hook ",
      "http://exa mple.com/hook",
      "http://example.com/ho\u0000ok",
      "http://example.com/\u00a0hook",
      "/relative/hook",
      "example.com/hook",
      "ftp://example.com/hook",
      "javascript:alert(1)",
      "http://",
      "http://169.254.169.254/latest/meta-data/",
      "http://169.254.0.1:8080/hook",
      "http://2852039166/", // 169.254.169.254 as one number
      "http://[fe80::1]/hook",
      "http://[febf:ffff::1]/hook",
      "http://[::ffff:169.254.169.254]/hook",
      "http://[fd00:ec2::254]/latest",
    ];

    it("refuses every URL that is not an absolute http(s) URL, or is link-local, and keeps the old one", async () => {
      const good = "http://127.0.0.1:9/hooks";
      expect(
        (await sandbox.client.PATCH("/config", { body: { webhookEndpoint: good } })).response
          .status,
      ).toBe(200);
      await expectRefusedWithoutWrites(async () => {
        for (const url of BAD) {
          const config = await sandbox.client.PATCH("/config", { body: { webhookEndpoint: url } });
          expect(config.response.status, JSON.stringify(url)).toBe(400);
          expect(config.error, JSON.stringify(url)).toMatchObject({
            code: "INVALID_INPUT",
            details: { errors: [{ field: "webhookEndpoint" }] },
          });
          const platform = await sandbox.client.POST("/sandbox/platforms", {
            body: { name: "hostile", webhookEndpoint: url },
          });
          expect(platform.response.status, JSON.stringify(url)).toBe(400);
        }
      });
      expect((await sandbox.client.GET("/config")).data?.webhookEndpoint).toBe(good);
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

    it("keeps loopback and private hosts, where partners' receivers run", async () => {
      for (const url of [
        "http://localhost:8787/webhooks",
        "http://127.0.0.1:8787/webhooks",
        "http://[::1]:8787/webhooks",
        "http://10.1.2.3/webhooks",
        "http://192.168.0.10:3000/webhooks",
        "https://hooks.example.com/payments?x=1",
      ]) {
        const { response, data } = await sandbox.client.PATCH("/config", {
          body: { webhookEndpoint: url },
        });
        expect(response.status, url).toBe(200);
        expect(data?.webhookEndpoint).toBe(url);
      }
    });

    it("reports at most the first KiB of the receiver's answer to the test webhook", async () => {
      const answer = `${"é".repeat(600)}${"x".repeat(5000)}`;
      const receiver: Server = createServer((req, res) => {
        req.resume();
        req.on("end", () => res.writeHead(418, { "Content-Type": "text/plain" }).end(answer));
      });
      await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
      try {
        const { port } = receiver.address() as AddressInfo;
        await sandbox.client.PATCH("/config", {
          body: { webhookEndpoint: `http://127.0.0.1:${port}/hook` },
        });
        const { data, response } = await sandbox.client.POST("/sandbox/webhooks/test");
        expect(response.status).toBe(200);
        expect(data?.response_status).toBe(418);
        // 1024 bytes are 512 two-byte characters.
        expect(data?.response_body).toBe("é".repeat(512));
      } finally {
        await new Promise((done) => receiver.close(done));
      }
    });
  });

  describe("requests refused before the router", () => {
    it("answers headers too large with 431 in the Error shape", async () => {
      const answer = await rawRequest(
        sandbox.server.origin,
        `GET /2025-10-13/customers HTTP/1.1\r\nHost: sandbox\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      );
      expect(answer.status).toBe(431);
      expect(answer.headers).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 431, code: "INVALID_INPUT" });
    });

    it("answers a request that is not HTTP, or has raw bytes in its URL, with 400 in the Error shape", async () => {
      for (const bytes of [
        "GET /2025-10-13/customers HTTP/1.1\r\nHost: sandbox\r\nNo colon here\r\n\r\n",
        "NOT-A-METHOD\r\n\r\n",
        Buffer.concat([
          Buffer.from("GET /2025-10-13/customers?platformCustomerId="),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(" HTTP/1.1\r\nHost: sandbox\r\n\r\n"),
        ]),
      ]) {
        const answer = await rawRequest(sandbox.server.origin, bytes);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      }
    });
  });

  describe("amounts the issue found answered with 500", () => {
    it("refuses transfers of 2^63, 2^63 - 1, 1e308 and above 2^53 - 1 and leaves the ledger as it was", async () => {
      const customer = await createCustomer(sandbox.client);
      const account = await createAccount(sandbox.client, customer.id, "USD", 1_000);
      const bank = await createBankAccount(sandbox.client, customer.id, "789");
      await expectRefusedWithoutWrites(async () => {
        for (const amount of [
          "9223372036854775808",
          "9223372036854775807",
          "1e308",
          "9007199254740993",
        ]) {
          for (const [path, source, destination] of [
            ["/transfer-out", account.id, bank.id],
            ["/transfer-in", bank.id, account.id],
          ] as const) {
            const res = await sandbox.rawFetch(path, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: `{"source":{"accountId":"${source}"},"destination":{"accountId":"${destination}"},"amount":${amount}}`,
            });
            expect(res.status, `${path} ${amount}`).toBe(400);
            expect(await res.json()).toMatchObject({
              code: "INVALID_INPUT",
              details: { errors: [{ field: "amount" }] },
            });
          }
        }
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(1_000);
    });

    it("refuses a fixed fee beyond 2^53 - 1 in PATCH /config instead of storing 1e+23", async () => {
      const res = await sandbox.rawFetch("/config", {
        method: "PATCH",
        headers: { "Content-Type": "application/json" },
        body: `{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":0,"fixedFee":{"amount":100000000000000000000000,"currency":"USD"}}]}`,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        details: { errors: [{ field: "feeConfigs.0.fixedFee.amount" }] },
      });
      expect(JSON.stringify((await sandbox.client.GET("/config")).data)).not.toMatch(/e\+/);
    });
  });
});
