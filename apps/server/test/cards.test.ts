import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { withId } from "./money-helpers.js";
import { cardLast4 } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createCard, eventsFor, getCard, newAccount, newCustomer } from "./card-fixtures.js";
import { advance, cardSteps } from "./support/cards.js";

// Issuing cards. Reading, updating and revealing them is in
// cards-management.test.ts.

describe.each(databases)("cards on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { holderWithAccount } = cardSteps(() => sandbox);

  describe("issuance", () => {
    it("answers PROCESSING, and the very next read shows the card ACTIVE", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "card-emp-aary-042",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      expect(card).toMatchObject({
        cardholderId: customerId,
        platformCardId: "card-emp-aary-042",
        brand: "VISA",
        form: "VIRTUAL",
        last4: "4042",
        fundingSources: [accountId],
        currency: "USD",
      });
      expect(card.id).toMatch(/^Card:[0-9a-f-]{36}$/);
      expect(card.expYear).toBe(new Date(card.createdAt).getUTCFullYear() + 3);
      expect(card.stateReason).toBeUndefined();

      const read = await getCard(sandbox, card.id);
      expect(read.state).toBe("ACTIVE");
      const events = await eventsFor(sandbox, card.id);
      expect(events.map((e) => e.type)).toEqual(["CARD.STATE_CHANGE"]);
      expect(events[0]!.data).toEqual(read);
    });

    it("activates at once through the job worker alone, with no read", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "card-worker-7",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      const until = Date.now() + 10_000;
      let state = "PROCESSING";
      while (state === "PROCESSING" && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        state = (await sandbox.server.data.one(
          q.selectFrom("Card").selectAll().where("id", "=", card.id),
        ))!.state;
      }
      expect(state).toBe("ACTIVE");
      expect((await eventsFor(sandbox, card.id)).map((e) => e.type)).toEqual(["CARD.STATE_CHANGE"]);
    });

    it("derives last4 from cardholderId when platformCardId is absent", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      expect(card.platformCardId).toBeUndefined();
      expect(card.last4).toBe(cardLast4(customerId));
    });

    it("suffix 001 stays PROCESSING, even hours later", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "card-slow-001",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      await advance(sandbox, 3600);
      expect((await getCard(sandbox, card.id)).state).toBe("PROCESSING");
      expect(await eventsFor(sandbox, card.id)).toEqual([]);
    });

    it("suffix 002 is rejected by the issuer: CLOSED with ISSUER_REJECTED", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "card-bad-002",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      const read = await getCard(sandbox, card.id);
      expect(read).toMatchObject({ state: "CLOSED", stateReason: "ISSUER_REJECTED" });
      const events = await eventsFor(sandbox, card.id);
      expect(events.map((e) => [e.type, e.data.state])).toEqual([["CARD.STATE_CHANGE", "CLOSED"]]);
    });

    it("suffix 005 activates about 30 seconds later (sandbox clock)", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "card-later-005",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      await advance(sandbox, 20);
      expect((await getCard(sandbox, card.id)).state).toBe("PROCESSING");
      expect(await eventsFor(sandbox, card.id)).toEqual([]);
      const advanced = await advance(sandbox, 15);
      expect(advanced.jobsRun).toBeGreaterThanOrEqual(1);
      // The job applied it: the database says so before any read.
      const row = await sandbox.server.data.one(
        q.selectFrom("Card").selectAll().where("id", "=", card.id),
      );
      expect(row?.state).toBe("ACTIVE");
      const read = await getCard(sandbox, card.id);
      expect(read.state).toBe("ACTIVE");
      expect(new Date(read.updatedAt).getTime() - new Date(card.createdAt).getTime()).toBe(30_000);
      const events = await eventsFor(sandbox, card.id);
      expect(events.map((e) => e.type)).toEqual(["CARD.STATE_CHANGE"]);
      expect(events[0]!.data).toEqual(read);
    });

    it("refuses a cardholder whose KYC is not APPROVED", async () => {
      for (const lastName of ["Pending001", "Rejected002"]) {
        const customerId = await newCustomer(sandbox, lastName);
        const accountId = await newAccount(sandbox, customerId);
        const { error, response } = await sandbox.client.POST("/cards", {
          body: { cardholderId: customerId, form: "VIRTUAL", fundingSources: [accountId] },
        });
        expect(response.status).toBe(400);
        expect(error).toMatchObject({ status: 400, code: "CARDHOLDER_KYC_NOT_APPROVED" });
      }
    });

    it("refuses unknown cardholders and accounts that are not the cardholder's", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const stranger = await holderWithAccount();
      const unknownHolder = await sandbox.client.POST("/cards", {
        body: {
          cardholderId: "Customer:00000000-0000-4000-8000-000000000000",
          form: "VIRTUAL",
          fundingSources: [accountId],
        },
      });
      // The live contract has no 404 here: an unknown reference in the body is a 400.
      expect(unknownHolder.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        details: { errors: [{ field: "cardholderId" }] },
      });

      const unknownAccount = await sandbox.client.POST("/cards", {
        body: {
          cardholderId: customerId,
          form: "VIRTUAL",
          fundingSources: [accountId, "InternalAccount:00000000-0000-4000-8000-000000000000"],
        },
      });
      expect(unknownAccount.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        details: { errors: [{ field: "fundingSources" }] },
      });

      const othersAccount = await sandbox.client.POST("/cards", {
        body: { cardholderId: customerId, form: "VIRTUAL", fundingSources: [stranger.accountId] },
      });
      expect(othersAccount.response.status).toBe(400);
      expect(othersAccount.error).toMatchObject({
        code: "FUNDING_SOURCE_INELIGIBLE",
        details: { accountId: stranger.accountId },
      });

      // Another platform's account does not exist for this one.
      const other = await sandbox.otherPlatformClient();
      const { data: foreignHolder } = await other.POST("/customers", {
        body: {
          customerType: "INDIVIDUAL",
          fullName: "F Oreign",
          email: "f@example.com",
        },
      });
      const { data: foreign } = await other.GET("/customers/internal-accounts", {
        params: { query: { customerId: withId(foreignHolder!).id } },
      });
      const foreignAccount = await sandbox.client.POST("/cards", {
        body: {
          cardholderId: customerId,
          form: "VIRTUAL",
          fundingSources: [foreign!.data[0]!.id],
        },
      });
      expect(foreignAccount.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    });

    it("refuses funding sources whose id ends in 002 or 003", async () => {
      const { customerId, accountId } = await holderWithAccount();
      // Account ids are random, so the fixture gives two accounts ids with
      // those endings directly; the outcome is still decided by POST /cards.
      const template = await sandbox.server.data.one(
        q.selectFrom("InternalAccount").selectAll().where("id", "=", accountId),
      );
      if (!template) throw new Error("the account was just created");
      for (const suffix of ["002", "003"]) {
        const id = `InternalAccount:7d9e3c1a-5b2f-4c8e-9a01-4f6b2d8e1${suffix}`;
        await sandbox.server.data.execute(
          q.insertInto("InternalAccount").values({ ...template, id }),
        );
        const { error, response } = await sandbox.client.POST("/cards", {
          body: { cardholderId: customerId, form: "VIRTUAL", fundingSources: [accountId, id] },
        });
        expect(response.status).toBe(400);
        expect(error).toMatchObject({
          code: "FUNDING_SOURCE_INELIGIBLE",
          details: { accountId: id },
        });
      }
    });

    it("refuses funding sources in another currency than the card", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const euros = await newAccount(sandbox, customerId, 0, "EUR");
      const mixed = await sandbox.client.POST("/cards", {
        body: { cardholderId: customerId, form: "VIRTUAL", fundingSources: [accountId, euros] },
      });
      expect(mixed.response.status).toBe(400);
      expect(mixed.error).toMatchObject({ code: "INVALID_CURRENCY" });
      // The card takes its funding sources' currency, and keeps it.
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [euros],
      });
      expect(card.currency).toBe("EUR");
      const switched = await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: card.id } },
        body: { fundingSources: [accountId] },
      });
      expect(switched.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
    });
  });
});
