import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withoutRevealToken } from "../src/areas/cards/reveal-page.js";
import { luhnValid } from "../src/areas/cards/test-card-details.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createCard, eventsFor, getCard, secondAccount } from "./card-fixtures.js";
import { advance, cardSteps } from "./support/cards.js";

// Cards once issued: reading and listing them, updating them, and revealing
// their details.

describe.each(databases)("cards on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { holderWithAccount } = cardSteps(() => sandbox);

  describe("reading and listing", () => {
    it("lists cards newest first with filters and a cursor", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const ids: string[] = [];
      for (const suffix of ["a", "b", "c-001", "d"]) {
        const card = await createCard(sandbox, {
          cardholderId: customerId,
          platformCardId: `list-${suffix}`,
          form: "VIRTUAL",
          fundingSources: [accountId],
        });
        ids.push(card.id);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const { data } = await sandbox.client.GET("/cards", {
          params: { query: { cardholderId: customerId, limit: 3, ...(cursor ? { cursor } : {}) } },
        });
        seen.push(...data!.data.map((c) => c.id));
        cursor = data!.nextCursor;
        expect(data!.hasMore).toBe(cursor !== undefined);
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());

      // Listing catches up issuance first, so the state filter is current.
      const active = await sandbox.client.GET("/cards", {
        params: { query: { cardholderId: customerId, state: "ACTIVE" } },
      });
      expect(active.data!.data.map((c) => c.platformCardId).sort()).toEqual([
        "list-a",
        "list-b",
        "list-d",
      ]);
      const processing = await sandbox.client.GET("/cards", {
        params: { query: { cardholderId: customerId, state: "PROCESSING" } },
      });
      expect(processing.data!.data.map((c) => c.platformCardId)).toEqual(["list-c-001"]);

      // Oldest first on request, with the same cursor paging; a total over all pages.
      const oldest: string[] = [];
      let from: string | undefined;
      do {
        const { data } = await sandbox.client.GET("/cards", {
          params: {
            query: {
              cardholderId: customerId,
              limit: 3,
              sortOrder: "asc",
              ...(from ? { cursor: from } : {}),
            },
          },
        });
        expect(data!.totalCount).toBe(4);
        oldest.push(...data!.data.map((c) => c.id));
        from = data!.nextCursor;
      } while (from);
      expect(oldest).toEqual(ids);
      const byPlatformId = await sandbox.client.GET("/cards", {
        params: { query: { platformCardId: "list-b" } },
      });
      expect(byPlatformId.data!.data.map((c) => c.id)).toEqual([ids[1]]);
      const byAccount = await sandbox.client.GET("/cards", {
        params: { query: { accountId } },
      });
      expect(byAccount.data).toMatchObject({ totalCount: 4 });
      expect(byAccount.data!.data.map((c) => c.id).sort()).toEqual([...ids].sort());
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

    it("hides one platform's cards from another", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      const other = await sandbox.otherPlatformClient();
      const got = await other.GET("/cards/{id}", { params: { path: { id: card.id } } });
      expect(got.response.status).toBe(404);
      expect(got.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });
      const patched = await other.PATCH("/cards/{id}", {
        params: { path: { id: card.id } },
        body: { state: "FROZEN" },
      });
      expect(patched.response.status).toBe(404);
      const listed = await other.GET("/cards", { params: { query: { cardholderId: customerId } } });
      expect(listed.data!.data).toEqual([]);
    });
  });

  describe("updates", () => {
    async function activeCardFor(customerId: string, accountId: string) {
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      expect((await getCard(sandbox, card.id)).state).toBe("ACTIVE");
      return card.id;
    }
    const patch = (
      id: string,
      body: { state?: "ACTIVE" | "FROZEN" | "CLOSED"; fundingSources?: string[] },
    ) => sandbox.client.PATCH("/cards/{id}", { params: { path: { id } }, body });

    it("freezes, unfreezes and closes, each with CARD.STATE_CHANGE", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const id = await activeCardFor(customerId, accountId);
      const frozen = await patch(id, { state: "FROZEN" });
      expect(frozen.data?.state).toBe("FROZEN");
      const again = await patch(id, { state: "FROZEN" });
      expect(again.response.status).toBe(409);
      expect(again.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      expect((await patch(id, { state: "ACTIVE" })).data?.state).toBe("ACTIVE");
      const closed = await patch(id, { state: "CLOSED" });
      expect(closed.data).toMatchObject({ state: "CLOSED", stateReason: "CLOSED_BY_PLATFORM" });
      for (const state of ["ACTIVE", "FROZEN"] as const) {
        const reopened = await patch(id, { state });
        expect(reopened.response.status).toBe(409);
        expect(reopened.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      }
      const closedAgain = await patch(id, { state: "CLOSED" });
      expect(closedAgain.response.status).toBe(409);
      expect(closedAgain.error).toMatchObject({ code: "CARD_ALREADY_CLOSED" });
      const resourced = await patch(id, { fundingSources: [accountId] });
      expect(resourced.response.status).toBe(409);
      expect(resourced.error).toMatchObject({ code: "CARD_NOT_MUTABLE" });
      const events = await eventsFor(sandbox, id);
      expect(events.map((e) => [e.type, e.data.state])).toEqual([
        ["CARD.STATE_CHANGE", "ACTIVE"],
        ["CARD.STATE_CHANGE", "FROZEN"],
        ["CARD.STATE_CHANGE", "ACTIVE"],
        ["CARD.STATE_CHANGE", "CLOSED"],
      ]);
      expect(events.at(-1)!.data).toEqual(closed.data);
    });

    it("closes a FROZEN card, and refuses to freeze a PROCESSING one", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const id = await activeCardFor(customerId, accountId);
      await patch(id, { state: "FROZEN" });
      expect((await patch(id, { state: "CLOSED" })).data?.stateReason).toBe("CLOSED_BY_PLATFORM");

      const pending = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "still-001",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      for (const state of ["FROZEN", "ACTIVE", "CLOSED"] as const) {
        const refused = await patch(pending.id, { state });
        expect(refused.response.status).toBe(409);
        expect(refused.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      }
    });

    it("replaces funding sources with CARD.FUNDING_SOURCE_CHANGE, under the same rules", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const second = await secondAccount(sandbox, customerId);
      const id = await activeCardFor(customerId, accountId);
      const changed = await patch(id, { fundingSources: [second, accountId] });
      expect(changed.data?.fundingSources).toEqual([second, accountId]);
      const events = await eventsFor(sandbox, id);
      expect(events.at(-1)).toMatchObject({
        type: "CARD.FUNDING_SOURCE_CHANGE",
        data: changed.data,
      });
      const stranger = await holderWithAccount();
      const refused = await patch(id, { fundingSources: [stranger.accountId] });
      expect(refused.response.status).toBe(400);
      expect(refused.error).toMatchObject({ code: "FUNDING_SOURCE_INELIGIBLE" });
      expect((await getCard(sandbox, id)).fundingSources).toEqual([second, accountId]);
    });
  });

  describe("reveal", () => {
    it("serves the details once, on a page outside the API, without credentials", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const created = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "reveal-me-314",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      const card = await getCard(sandbox, created.id);
      const { data, response } = await sandbox.client.POST("/cards/{id}/reveal", {
        params: { path: { id: card.id } },
      });
      expect(response.status).toBe(200);
      const url = new URL(data!.panEmbedUrl);
      expect(url.origin).toBe(sandbox.server.origin);
      expect(url.pathname).toMatch(/^\/card-reveal\/[A-Za-z0-9_-]{43}$/);
      const ttl = new Date(data!.expiresAt).getTime() - new Date(card.updatedAt).getTime();
      expect(ttl).toBeGreaterThan(290_000);
      expect(ttl).toBeLessThanOrEqual(310_000);

      const page = await fetch(data!.panEmbedUrl);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("cache-control")).toBe("no-store");
      const html = await page.text();
      const pan = /id="pan">([0-9 ]+)</.exec(html)![1]!.replace(/ /g, "");
      expect(pan).toHaveLength(16);
      expect(luhnValid(pan)).toBe(true);
      expect(pan.endsWith(card.last4!)).toBe(true);
      expect(card.last4).toBe("4314");
      expect(html).toMatch(/id="cvv">[0-9]{3}</);
      const expiry = `${String(card.expMonth).padStart(2, "0")}/${String(card.expYear! % 100)}`;
      expect(html).toContain(`id="expiry">${expiry}<`);

      const reused = await fetch(data!.panEmbedUrl);
      expect(reused.status).toBe(410);
      const reusedHtml = await reused.text();
      expect(reusedHtml).toContain("This link has expired");
      expect(reusedHtml).not.toContain(pan.slice(-8));
    });

    it("expires the URL after five minutes of sandbox time; unknown tokens are 404", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      await getCard(sandbox, card.id);
      const { data } = await sandbox.client.POST("/cards/{id}/reveal", {
        params: { path: { id: card.id } },
      });
      await advance(sandbox, 301);
      const expired = await fetch(data!.panEmbedUrl);
      expect(expired.status).toBe(410);
      expect(await expired.text()).toContain("This link has expired");

      const unknown = await fetch(`${sandbox.server.origin}/card-reveal/${"A".repeat(43)}`);
      expect(unknown.status).toBe(404);
      expect(await unknown.text()).toContain("This link is not valid");
    });

    it("keeps the token out of logged paths", () => {
      const path = `/card-reveal/${"x".repeat(43)}`;
      expect(withoutRevealToken(path)).toBe("/card-reveal/[token]");
      expect(withoutRevealToken("/2025-10-13/cards")).toBe("/2025-10-13/cards");
    });

    it("reveals only ACTIVE or FROZEN cards", async () => {
      const { customerId, accountId } = await holderWithAccount();
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "not-yet-001",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      const { error } = await sandbox.client.POST("/cards/{id}/reveal", {
        params: { path: { id: card.id } },
      });
      expect(error).toMatchObject({ status: 403, code: "FORBIDDEN" });
    });
  });
});
