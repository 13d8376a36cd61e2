import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Schemas } from "@payments-sandbox/client";
import {
  cli,
  cliBin,
  createTestPlatform,
  startForwardTarget,
  startLiveSandbox,
  waitFor,
  type LiveSandbox,
} from "./support.js";

// `trigger`, checked against the contract: every webhook event type in
// openapi.yaml is caused by a flow that `trigger --list` names (or is listed
// there as caused by none, with the reason), and running each flow really
// delivers each event type it claims. Each flow runs on a platform of its own
// whose webhook endpoint answers 200.

const here = dirname(fileURLToPath(import.meta.url));
const contract = parse(readFileSync(join(here, "..", "..", "..", "openapi.yaml"), "utf8")) as {
  webhooks: Record<
    string,
    { post: { requestBody: { content: Record<string, { schema: Schema }> } } }
  >;
  components: { schemas: Record<string, Schema> };
};

type Schema = {
  $ref?: string;
  allOf?: Schema[];
  properties?: { type?: { const?: string; enum?: string[] } };
};

/** The values the envelope's own `type` can take in a webhook's schema (its const or enum). */
function typesOf(schema: Schema): string[] {
  const own = schema.properties?.type;
  if (own?.const !== undefined || own?.enum !== undefined) {
    return [...(own.const !== undefined ? [own.const] : []), ...(own.enum ?? [])];
  }
  if (schema.$ref) return typesOf(contract.components.schemas[schema.$ref.split("/").at(-1)!]!);
  return (schema.allOf ?? []).flatMap(typesOf);
}

/** Every event type of the contract's `webhooks:` section. */
function contractEventTypes(): string[] {
  return [
    ...new Set(
      Object.values(contract.webhooks).flatMap((webhook) =>
        Object.values(webhook.post.requestBody.content).flatMap((media) => typesOf(media.schema)),
      ),
    ),
  ].sort();
}

interface Listing {
  flows: {
    flow: string;
    events: string[];
    creates: Record<string, string>;
    outcomes?: { outcome: string; events: string[] }[];
  }[];
  notTriggered: Record<string, string>;
}

let sandbox: LiveSandbox;
let listing: Listing;
beforeAll(async () => {
  sandbox = await startLiveSandbox();
  const listed = await cli(["trigger", "--list", "--json"], {});
  expect(listed.code, listed.stderr).toBe(0);
  listing = JSON.parse(listed.stdout) as Listing;
});
afterAll(async () => {
  await sandbox?.stop();
});

/** Each run: a flow with its options, and the event types --list says it causes. */
function runsFromList(): { name: string; args: string[]; events: string[] }[] {
  // Read when the tests are collected, from a folder outside the repository.
  const listed = spawnSync(process.execPath, [cliBin, "trigger", "--list", "--json"], {
    cwd: tmpdir(),
    encoding: "utf8",
  });
  if (listed.status !== 0) throw new Error(`trigger --list: ${listed.stderr}`);
  return (JSON.parse(listed.stdout) as Listing).flows.flatMap((flow) =>
    flow.outcomes
      ? flow.outcomes.map((o) => ({
          name: `${flow.flow} --outcome ${o.outcome}`,
          args: [flow.flow, "--outcome", o.outcome],
          events: o.events,
        }))
      : [{ name: flow.flow, args: [flow.flow], events: flow.events }],
  );
}

describe("trigger --list", () => {
  it("accounts for every webhook event type of the contract", () => {
    const caused = new Set(
      listing.flows.flatMap((f) => [...f.events, ...(f.outcomes ?? []).flatMap((o) => o.events)]),
    );
    const missing = contractEventTypes().filter(
      (type) => !caused.has(type) && !(type in listing.notTriggered),
    );
    expect(missing).toEqual([]);
    // The contract was read: its types are there.
    expect(contractEventTypes()).toEqual(expect.arrayContaining(["TEST", "CUSTOMER.KYC_APPROVED"]));
    // Nothing is both caused and said not to be, and every listed type is the contract's.
    expect([...caused].filter((type) => type in listing.notTriggered)).toEqual([]);
    expect(
      [...caused, ...Object.keys(listing.notTriggered)].filter(
        (t) => !contractEventTypes().includes(t),
      ),
    ).toEqual([]);
  });

  it("prints each flow with its description, events and overrides", async () => {
    const human = await cli(["trigger", "--list"], {});
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^card-refund {2}a purchase cleared in full, then returned/m);
    expect(human.stdout).toContain("events:    CUSTOMER.KYC_PENDING, CUSTOMER.KYC_APPROVED");
    expect(human.stdout).toContain("customer (the cardholder: POST /customers)");
    expect(human.stdout).toMatch(
      /--outcome 002 +OUTGOING_PAYMENT.PENDING, OUTGOING_PAYMENT.FAILED/,
    );
    expect(human.stdout).toContain("INTERNAL_ACCOUNT.STATUS_UPDATED: the sandbox never");
    const extra = await cli(["trigger", "kyc", "--list"], {});
    expect(extra.code).toBe(2);
  });
});

describe("trigger", () => {
  it.each(runsFromList())("$name delivers each event type it lists", async ({ args, events }) => {
    const platform = await createTestPlatform(sandbox, `trigger ${args.join(" ")}`);
    const target = await startForwardTarget();
    try {
      const set = await platform.client.PATCH("/config", { body: { webhookEndpoint: target.url } });
      expect(set.response.status).toBe(200);
      const result = await cli(["trigger", ...args, "--json"], platform.env);
      expect(result.code, result.stderr).toBe(0);
      for (const type of events) {
        const page = await platform.client.GET("/sandbox/webhooks/events", {
          params: { query: { type: type as Schemas["WebhookEventType"] } },
        });
        expect({ type, count: page.data?.data.length }).not.toEqual({ type, count: 0 });
        await waitFor(`${type} delivered`, () =>
          target.received.some((w) => (JSON.parse(w.body) as { type: string }).type === type),
        );
      }
    } finally {
      await target.close();
      await cli(["platforms", "delete", platform.created.id], sandbox.rootEnv);
    }
  });
});

describe("trigger --override", () => {
  it("puts values into the objects a flow creates, and refuses keys it does not create", async () => {
    const platform = await createTestPlatform(sandbox, "trigger overrides");
    try {
      const rejected = await cli(
        [
          "trigger",
          "kyc-rejected",
          "--override",
          "customer.fullName=Ada Smith002",
          "--override",
          "customer.platformCustomerId=ada-1",
          "--json",
        ],
        platform.env,
      );
      expect(rejected.code, rejected.stderr).toBe(0);
      const { customerId } = JSON.parse(rejected.stdout) as { customerId: string };
      const customer = await platform.client.GET("/customers/{customerId}", {
        params: { path: { customerId } },
      });
      expect(customer.data).toMatchObject({
        fullName: "Ada Smith002",
        platformCustomerId: "ada-1",
        kycStatus: "REJECTED",
      });

      const paid = await cli(
        ["trigger", "incoming-payment", "--override", "amount=4321", "--json"],
        platform.env,
      );
      expect(paid.code, paid.stderr).toBe(0);
      const done = JSON.parse(paid.stdout) as { customerId: string; accountId: string };
      const accounts = await platform.client.GET("/customers/internal-accounts", {
        params: { query: { customerId: done.customerId, currency: "USD" } },
      });
      const account = accounts.data?.data.find((a) => a.id === done.accountId);
      expect(account?.balance.amount).toBe(4321);

      const unknown = await cli(
        ["trigger", "kyc", "--override", "card.form=PHYSICAL"],
        platform.env,
      );
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('kyc creates no "card"; it accepts customer, amount');
      const typo = await cli(
        ["trigger", "kyc", "--override", "customer.fulName=Ada"],
        platform.env,
      );
      expect(typo.code).toBe(1);
      expect(typo.stderr).toContain("fulName");
      const twice = await cli(
        ["trigger", "quote", "--amount", "5", "--override", "amount=6"],
        platform.env,
      );
      expect(twice.code).toBe(2);
      const malformed = await cli(["trigger", "kyc", "--override", "customer"], platform.env);
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toContain("is not path=value");
    } finally {
      await cli(["platforms", "delete", platform.created.id], sandbox.rootEnv);
    }
  });
});
