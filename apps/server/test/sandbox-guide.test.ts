import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../src/paths.js";
import { startSandbox, type TestSandbox } from "./harness.js";
import { expectLedgersBalanced } from "./money-helpers.js";

const run = promisify(execFile);

function commandExists(name: string): boolean {
  return (process.env.PATH ?? "").split(":").some((dir) => {
    try {
      readFileSync(join(dir, name));
      return true;
    } catch {
      return false;
    }
  });
}

// docs/sandbox-guide.md promises that its shell blocks, run in order, work
// against a fresh sandbox. This runs them exactly as written (only the port
// differs) and checks what they print.
describe.runIf(commandExists("jq") && commandExists("curl"))("the sandbox guide", () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox("sqlite");
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("runs its shell walkthrough as printed", async () => {
    const guide = readFileSync(join(repoRoot, "docs", "sandbox-guide.md"), "utf8");
    const blocks = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks.length).toBeGreaterThan(5);
    const script = blocks
      .join("\n")
      .replaceAll("http://localhost:3000/2025-10-13", sandbox.server.baseUrl);
    const { stdout } = await run("sh", ["-ec", script], {
      env: {
        PATH: process.env.PATH ?? "",
        SANDBOX_TOKEN_ID: sandbox.credentials.tokenId,
        SANDBOX_TOKEN_SECRET: sandbox.credentials.secret,
      },
      timeout: 150_000,
    });
    const lines = stdout.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(
        /^\{"source":"USD","destination":"EUR","rail":"SEPA","exchangeRate":0\.8/,
      ),
      '{"offsetSeconds":0}',
      "APPROVED",
      "REJECTED",
      "REJECTED",
      "200",
      "PENDING",
      "passport.pdf",
      "EXPIRED",
      '{"status":"COMPLETED","progress":{"total":1,"processed":1,"successful":1,"failed":0}}',
      '{"amount":100000,"currency":{"code":"USD","name":"US Dollar","symbol":"$","decimals":2}}',
      "100000",
      "MATCHED",
      "INVALID_BANK_ACCOUNT",
      '{"type":"OUTGOING","status":"COMPLETED","sent":25000}',
      "PENDING",
      '{"status":"FAILED","failureReason":"COUNTERPARTY_POST_TX_FAILED","refund":"COMPLETED"}',
      expect.stringMatching(/^\{"ids":\["Transaction:.*\],"hasMore":true,"totalCount":\d+\}$/),
      expect.stringMatching(/^Transaction:/),
      expect.stringMatching(/^Transaction:/),
      expect.stringMatching(
        /^\{"status":"PROCESSING","totalSendingAmount":\d+,"totalReceivingAmount":8600,/,
      ),
      "COMPLETED",
      expect.stringMatching(
        /^\{"accountType":"USD_ACCOUNT","routingNumber":"110000000","reference":"QT-/,
      ),
      '{"type":"OUTGOING","status":"COMPLETED"}',
      '{"type":"INCOMING","status":"COMPLETED","received":2500}',
      '{"status":"FAILED","failureReason":"COMPLIANCE_REJECTED"}',
      "LOOKUP_REQUEST_FAILED",
      "PENDING",
      '["SANDBOX_BANK_PH","SANDBOX_EWALLET_PH"]',
      '{"names":["Sandbox Remit","Sandbox UMA"],"totalCount":2}',
      "true",
      "PENDING_APPROVAL",
      "1",
      '{"status":"APPROVED","transaction":"COMPLETED"}',
      "VELOCITY_LIMIT_EXCEEDED",
      "FORBIDDEN",
      "true",
      "UNAUTHORIZED",
      '{"email":"PENDING","phone":"PENDING"}',
      '{"code":"INVALID_INPUT","attemptsLeft":4}',
      '{"email":"VERIFIED","phone":"PENDING"}',
      "CONFLICT",
      '[{"factor":"SMS_OTP"}]',
      "SUCCESS",
      '{"factor":"SMS_OTP","availableFactors":["SMS_OTP"]}',
      '{"trusted":true}',
      "BENEFICIARY_TRUSTED",
      "CONFLICT",
      '{"status":400,"code":"INVITATIONS_NOT_CONFIGURED"}',
      "wallet.example.com",
      expect.stringMatching(
        /^\{"status":"PENDING","url":"https:\/\/wallet\.example\.com\/i\/[0-9a-f]{12}","amount":2500\}$/,
      ),
      '{"status":"CLAIMED","inviteeUma":"$grace@pay.example.org"}',
      "INVITATION.CLAIMED",
      "INVITATION_ALREADY_CLAIMED",
      "INVITATION_ALREADY_CLAIMED",
      '{"name":"Reporting","permissions":["VIEW"],"secretShown":false}',
      '{"code":"FORBIDDEN","reason":"Missing permission: TRANSACT"}',
      '{"status":401,"reason":"Missing permission: MANAGE"}',
      "401",
      "REVOKED",
      "STABLECOIN_PROVIDER_ACCOUNT_REVOKED",
      "ACTIVE",
      '{"status":"PROCESSING","amount":"500000000"}',
      "COMPLETED",
      "500000000",
      '{"status":"PROCESSING","estimatedDelivery":{"rail":"ACH_CREDIT","amount":"20000","currency":"USD","timing":"1-3 business days"}}',
      "300000000",
      "SERVICE_UNAVAILABLE",
    ]);
    // The idempotent transfer printed one transaction twice.
    expect(lines[18]).toBe(lines[19]);
    await expectLedgersBalanced(sandbox.server.data);
    // A fresh sandbox compiles each operation's response check on first use,
    // and the walkthrough uses many operations once each.
  }, 180_000);
});
