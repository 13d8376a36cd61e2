import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import {
  SANDBOX_SCA_CODE,
  SCA_CHALLENGE_SECONDS,
  SCA_MAX_ATTEMPTS,
} from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  bankAccountInfo,
  createAccount,
  createBankAccount,
  executeQuote,
  logInWithSca,
} from "./money-helpers.js";
import { ORIGIN, SLOW_TEST_MS, WRONG_CODE, scaSteps } from "./support/sca.js";

// Strong customer authentication: trusting and untrusting a beneficiary.

describe.each(databases)("strong customer authentication on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    // The passkeys here are made for an app page at ORIGIN.
    sandbox = await startSandbox(kind, { env: { PASSKEY_ORIGIN: ORIGIN } });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { customer, near, now } = scaSteps(() => sandbox);

  describe("trusted beneficiaries", () => {
    const ea = (externalAccountId: string) => ({ params: { path: { externalAccountId } } });
    const trust = (id: string) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/trust", ea(id));
    const confirmTrust = (id: string, body: Schemas["BeneficiaryTrustConfirmRequest"]) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/trust/confirm", {
        ...ea(id),
        body,
      });
    const untrust = (id: string) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/untrust", ea(id));
    const confirmUntrust = (id: string, body: Schemas["BeneficiaryTrustConfirmRequest"]) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/untrust/confirm", {
        ...ea(id),
        body,
      });

    it(
      "trusts a beneficiary with the SMS code; its quotes need no challenge; untrusting brings them back",
      async () => {
        const { id } = await customer("DE");
        const iban = await createBankAccount(sandbox.client, id, "000", "EUR");
        const before = await now();
        const started = await trust(iban.id);
        expect(started.data).toEqual({
          scaChallenge: {
            id: expect.stringMatching(/^ScaChallenge:/),
            expiresAt: expect.any(String),
            factor: "SMS_OTP",
            availableFactors: ["SMS_OTP"],
          },
        });
        near(started.data?.scaChallenge?.expiresAt, before + SCA_CHALLENGE_SECONDS * 1000);
        const challengeId = started.data!.scaChallenge!.id;
        expect(
          (
            await confirmTrust(iban.id, {
              challengeId: "ScaChallenge:other",
              code: SANDBOX_SCA_CODE,
            })
          ).error,
        ).toMatchObject({
          status: 400,
          code: "INVALID_INPUT",
        });
        expect(
          (await confirmTrust(iban.id, { challengeId, code: WRONG_CODE })).error,
        ).toMatchObject({
          status: 400,
          code: "INVALID_INPUT",
          details: { attemptsLeft: SCA_MAX_ATTEMPTS - 1 },
        });
        expect((await confirmTrust(iban.id, { challengeId, code: SANDBOX_SCA_CODE })).data).toEqual(
          {
            trusted: true,
          },
        );

        // A trusted beneficiary cannot be deleted.
        const deleting = await sandbox.client.DELETE(
          "/customers/external-accounts/{externalAccountId}",
          ea(iban.id),
        );
        expect(deleting.error).toMatchObject({ status: 409, code: "BENEFICIARY_TRUSTED" });

        // A payment to it is executed without a challenge.
        const account = await createAccount(sandbox.client, id, "USD", 20_000);
        const quote = async () => {
          const { data } = await sandbox.client.POST("/quotes", {
            body: {
              source: { sourceType: "ACCOUNT", accountId: account.id },
              destination: { destinationType: "ACCOUNT", accountId: iban.id },
              lockedCurrencySide: "SENDING",
              lockedCurrencyAmount: 3_000,
            },
          });
          return data!;
        };
        const paid = await executeQuote(sandbox.client, (await quote()).id);
        expect(paid.data?.status).toBe("COMPLETED");
        expect(paid.data).not.toHaveProperty("scaChallenge");
        expect(await balanceOf(sandbox.client, account.id)).toBe(17_000);

        const { data: untrustStarted } = await untrust(iban.id);
        expect(untrustStarted?.scaChallenge?.factor).toBe("SMS_OTP");
        expect((await confirmUntrust(iban.id, { code: SANDBOX_SCA_CODE })).data).toEqual({
          trusted: false,
        });
        const held = await executeQuote(sandbox.client, (await quote()).id);
        expect(held.data).toMatchObject({
          status: "PENDING_AUTHORIZATION",
          scaChallenge: { factor: "SMS_OTP" },
        });
        await logInWithSca(sandbox.client, id);
        const released = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
          params: { path: { quoteId: held.data!.id } },
          body: { code: SANDBOX_SCA_CODE },
        });
        expect(released.data?.status).toBe("COMPLETED");

        const deleted = await sandbox.client.DELETE(
          "/customers/external-accounts/{externalAccountId}",
          ea(iban.id),
        );
        expect(deleted.response.status).toBe(204);
      },
      SLOW_TEST_MS,
    );

    it("refuses a confirmation with no challenge, an expired one, or one spent by wrong codes", async () => {
      const { id } = await customer();
      const iban = await createBankAccount(sandbox.client, id, "000", "EUR");
      const none = await confirmTrust(iban.id, { code: SANDBOX_SCA_CODE });
      expect(none.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      // No proof at all is refused by the contract's anyOf.
      expect((await confirmTrust(iban.id, {})).error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
      });
      const noCode = await trust(iban.id);
      expect(noCode.response.status).toBe(200);
      expect(
        (await confirmTrust(iban.id, { passkeyAssertion: {}, origin: ORIGIN })).error,
      ).toMatchObject({ status: 400, code: "INVALID_INPUT" });

      const left: unknown[] = [];
      for (let i = 0; i < SCA_MAX_ATTEMPTS; i++) {
        left.push((await confirmTrust(iban.id, { code: WRONG_CODE })).error?.details?.attemptsLeft);
      }
      expect(left).toEqual([4, 3, 2, 1, 0]);
      expect((await confirmTrust(iban.id, { code: SANDBOX_SCA_CODE })).error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
      });

      await trust(iban.id);
      await advanceClock(sandbox.client, SCA_CHALLENGE_SECONDS);
      const expired = await confirmTrust(iban.id, { code: SANDBOX_SCA_CODE });
      expect(expired.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      expect(expired.error?.message).toMatch(/expired/);
    });

    it("does not know a platform's own external account as a beneficiary", async () => {
      const { data } = await sandbox.client.POST("/platform/external-accounts", {
        body: { currency: "USD", accountInfo: bankAccountInfo("000") },
      });
      expect(data?.id).toBeDefined();
      const answer = await trust(data!.id);
      expect(answer.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    });
  });
});
