#!/usr/bin/env node
// The partner suite: the common path of an integration, played in a fixed
// order through the typed client (@payments-sandbox/client), one request at
// a time, as a partner's CI run would. Its wall time and the server's CPU
// per scenario make a regression anywhere on that path show as one number.
//
//   npm run build                      (the server runs from apps/server/dist)
//   node bench/partner-suite.mjs [--runs 20] [--warmup 3] [--database sqlite|postgresql]
//
// A run is four scenarios, each on new objects of its own run:
// 1. payment: a customer (USD and USDB), its USD account found and funded, a
//    EUR bank account, a quote from the one to the other, and its execution;
// 2. card: a virtual card funded by that account, read back ACTIVE, a
//    purchase authorized, cleared with a tip, and refunded in full;
// 3. wallet: the customer's embedded wallet and its EMAIL_OTP credential
//    found, an OTP login, and a signed action (privacy on) stamped with the
//    session key;
// 4. webhooks: the wait, after the last call, until every event the run's
//    calls announced has reached a local receiver registered as the
//    platform's webhook endpoint (webhook-receiver.mjs), each with a good
//    signature.
//
// Per scenario: the median and p90 wall time over --runs, the requests it
// makes, the server's CPU time (user + system, /proc) over the runs ÷ runs
// (on PostgreSQL also that of the PostgreSQL processes), and how long after
// its last answer its last event arrived (median). The server delivers
// webhooks while the next scenario runs, so a scenario's CPU holds the
// deliveries that happened during it, and the webhooks wait is short unless
// deliveries fall behind the calls. --warmup runs go first, not
// measured, so the figures are of a server past its first requests (those
// are first-requests.mjs's subject). After the runs, the sandbox's event log
// is compared with what arrived: an event the suite did not wait for is
// reported.
import { cpus } from "node:os";
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createClient, isCardDecline, otpLogin, signed } from "@payments-sandbox/client";
import { cpuMs, median, percentile, postgresCpuMs, startSandbox } from "./processes.mjs";
import { keysOf, startReceiver } from "./webhook-receiver.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "20" },
    warmup: { type: "string", default: "3" },
    database: { type: "string", default: "sqlite" },
    "postgres-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/test" },
  },
});
const runs = Number(args.runs);
const warmupRuns = Number(args.warmup);
const onPostgres = args.database === "postgresql";
// A run whose events have not all arrived by then has lost one.
const WEBHOOK_TIMEOUT_MS = 30_000;

/** The data of a client call's answer; anything else stops the suite. */
function ok(result, what) {
  if (result.data === undefined) {
    throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

function check(condition, what) {
  if (!condition) throw new Error(`unexpected: ${what}`);
}

const sandbox = await startSandbox(root, {
  database: args.database,
  postgresUrl: args["postgres-url"],
});
let requests = 0;
const api = createClient({
  baseUrl: sandbox.base,
  tokenId: sandbox.tokenId,
  secret: sandbox.secret,
  // Counted, to show what each scenario asks of the server.
  options: {
    fetch: (request, init) => {
      requests++;
      return fetch(request, init);
    },
  },
});

/** The scenarios of run `n`; each returns the events it expects (key → count). */
const scenarios = {
  async payment(n, state) {
    const customer = ok(
      await api.POST("/customers", {
        body: {
          customerType: "INDIVIDUAL",
          fullName: "Ada Lovelace",
          email: `partner-${n}@example.com`,
          currencies: ["USD", "USDB"],
        },
      }),
      "create the customer",
    );
    const accounts = ok(
      await api.GET("/customers/internal-accounts", {
        params: { query: { customerId: customer.id, currency: "USD" } },
      }),
      "find its USD account",
    );
    const account = accounts.data[0];
    check(account, "the customer has no USD account");
    ok(
      await api.POST("/sandbox/internal-accounts/{accountId}/fund", {
        params: { path: { accountId: account.id } },
        body: { amount: 100_000 },
      }),
      "fund the account",
    );
    // An IBAN without a magic suffix: the payment completes at once.
    const iban = ok(
      await api.POST("/customers/external-accounts", {
        body: {
          customerId: customer.id,
          currency: "EUR",
          accountInfo: {
            accountType: "EUR_ACCOUNT",
            iban: "DE89370400440532013000",
            beneficiary: {
              beneficiaryType: "INDIVIDUAL",
              fullName: "Ada Lovelace",
              countryOfResidence: "DE",
            },
          },
        },
      }),
      "add the EUR bank account",
    );
    const quote = ok(
      await api.POST("/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: account.id },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 10_000,
        },
      }),
      "quote",
    );
    const paid = ok(
      await api.POST("/quotes/{quoteId}/execute", {
        params: { path: { quoteId: quote.id }, header: { "Idempotency-Key": randomUUID() } },
      }),
      "execute the quote",
    );
    check(paid.status === "COMPLETED", `quote ${paid.status}`);
    Object.assign(state, { customer, account });
    return [
      ["CUSTOMER.KYC_APPROVED", customer.id],
      ["INCOMING_PAYMENT.COMPLETED", account.id],
      // Funded, then debited by the payment.
      ["INTERNAL_ACCOUNT.BALANCE_UPDATED", account.id, 2],
      ["OUTGOING_PAYMENT.PENDING", paid.transactionId],
      ["OUTGOING_PAYMENT.COMPLETED", paid.transactionId],
    ];
  },

  async card(n, { customer, account }) {
    const issued = ok(
      await api.POST("/cards", {
        body: {
          cardholderId: customer.id,
          platformCardId: `partner-${n}-card`,
          form: "VIRTUAL",
          fundingSources: [account.id],
        },
      }),
      "issue the card",
    );
    const card = ok(
      await api.GET("/cards/{id}", { params: { path: { id: issued.id } } }),
      "read the card",
    );
    check(card.state === "ACTIVE", `card ${card.state}`);
    const path = { params: { path: { id: card.id } } };
    const authorized = ok(
      await api.POST("/sandbox/cards/{id}/simulate/authorization", {
        ...path,
        body: {
          amount: 2500,
          currency: { code: "USD" },
          merchant: { descriptor: "BLUE BOTTLE COFFEE SF", mcc: "5814", country: "US" },
        },
      }),
      "authorize a purchase",
    );
    check(!isCardDecline(authorized), "the purchase was declined");
    const settled = ok(
      await api.POST("/sandbox/cards/{id}/simulate/clearing", {
        ...path,
        body: { cardTransactionId: authorized.id, amount: 2750 },
      }),
      "clear it with a tip",
    );
    check(settled.status === "SETTLED", `cleared ${settled.status}`);
    const refunded = ok(
      await api.POST("/sandbox/cards/{id}/simulate/return", {
        ...path,
        body: { cardTransactionId: authorized.id, amount: 2750 },
      }),
      "refund it",
    );
    check(refunded.status === "REFUNDED", `refunded ${refunded.status}`);
    return [
      ["CARD.STATE_CHANGE", card.id],
      ["CARD_TRANSACTION.AUTHORIZED", authorized.id],
      ["CARD_TRANSACTION.SETTLED", authorized.id],
      ["CARD_TRANSACTION.REFUNDED", authorized.id],
      // The hold, the tip's pull, the refund.
      ["INTERNAL_ACCOUNT.BALANCE_UPDATED", account.id, 3],
    ];
  },

  async wallet(_n, { customer }, { enclavePublicKey }) {
    const wallets = ok(
      await api.GET("/customers/internal-accounts", {
        params: { query: { customerId: customer.id, type: "EMBEDDED_WALLET" } },
      }),
      "find the wallet",
    );
    const accountId = wallets.data[0]?.id;
    check(accountId, "the customer has no embedded wallet");
    const credentials = ok(
      await api.GET("/auth/credentials", { params: { query: { accountId } } }),
      "list its credentials",
    );
    const email = credentials.data.find((method) => method.type === "EMAIL_OTP");
    check(email, "the wallet has no EMAIL_OTP credential");
    const session = await otpLogin(api, email.id, { code: "000000", enclavePublicKey });
    // The body is built once: the challenge binds it.
    const body = { privateEnabled: true };
    const updated = await signed(
      (header) =>
        api.PATCH("/internal-accounts/{id}", { params: { path: { id: accountId }, header }, body }),
      session,
    );
    check(updated.privateEnabled === true, "privacy is not on");
    return [];
  },
};

const PARTS = ["payment", "card", "wallet", "webhooks"];

/** A part's figures over the measured runs. */
const figures = Object.fromEntries(
  PARTS.map((part) => [
    part,
    { wallMs: [], requests: 0, cpuMs: 0, postgresCpuMs: 0, webhookLagMs: [] },
  ]),
);

/**
 * Runs `fn` as part `part` of a run; its figures are kept when `measured`.
 * Resolves to fn's result and the time (performance.now()) it ended.
 */
async function timed(part, measured, fn) {
  const cpuBefore = cpuMs(sandbox.pid);
  const postgresBefore = onPostgres ? postgresCpuMs() : 0;
  const requestsBefore = requests;
  const started = performance.now();
  const result = await fn();
  const endedAt = performance.now();
  const wallMs = endedAt - started;
  if (measured) {
    const f = figures[part];
    f.wallMs.push(wallMs);
    f.requests += requests - requestsBefore;
    f.cpuMs += cpuMs(sandbox.pid) - cpuBefore;
    if (onPostgres) f.postgresCpuMs += postgresCpuMs() - postgresBefore;
  }
  return [result, endedAt];
}

/** Every event of the sandbox's log (unmeasured: between and after the runs). */
async function eventLog() {
  const events = [];
  let cursor;
  do {
    const page = ok(
      await api.GET("/sandbox/webhooks/events", {
        params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } },
      }),
      "list the webhook events",
    );
    events.push(...page.data);
    cursor = page.hasMore ? page.nextCursor : undefined;
  } while (cursor);
  return events;
}

/** Waits until the log has nothing left to deliver, so no run pays for another's deliveries. */
async function settled() {
  const deadline = performance.now() + WEBHOOK_TIMEOUT_MS;
  for (;;) {
    const events = await eventLog();
    if (events.every((event) => event.deliveryStatus === "DELIVERED")) return events;
    if (performance.now() > deadline) throw new Error("webhook deliveries did not settle");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let receiver;
let report;
const expectedAll = new Map();
const count = (map, key, n = 1) => map.set(key, (map.get(key) ?? 0) + n);
try {
  const keys = ok(await api.GET("/sandbox/keys"), "read the sandbox keys");
  receiver = await startReceiver(keys.webhookPublicKey, WEBHOOK_TIMEOUT_MS);
  ok(
    await api.PATCH("/config", { body: { webhookEndpoint: receiver.url } }),
    "set the webhook endpoint",
  );
  const context = { enclavePublicKey: keys.otpEnclavePublicKey };
  for (let n = 1; n <= warmupRuns + runs; n++) {
    const measured = n > warmupRuns;
    const state = {};
    // Each event the run expects (key → count so far), and each part's own.
    const expected = new Map();
    const parts = [];
    for (const part of ["payment", "card", "wallet"]) {
      const [events, endedAt] = await timed(part, measured, () =>
        scenarios[part](n, state, context),
      );
      const needs = events.map(([type, objectId, times = 1]) => {
        const key = `${type} ${objectId}`;
        count(expected, key, times);
        return [key, expected.get(key)];
      });
      parts.push({ part, endedAt, needs });
    }
    await timed("webhooks", measured, () => receiver.arrived(expected));
    // How long after its last answer a part's last event arrived.
    for (const { part, endedAt, needs } of measured ? parts : []) {
      if (needs.length === 0) continue;
      const last = Math.max(...needs.map(([key, n]) => receiver.arrivedAt(key, n)));
      figures[part].webhookLagMs.push(Math.max(0, last - endedAt));
    }
    for (const [key, times] of expected) count(expectedAll, key, times);
    // The warm-up's last deliveries are not the first measured run's work.
    if (n === warmupRuns) await settled();
  }
  const log = await settled();
  const unexpected = new Map();
  const left = new Map(expectedAll);
  for (const event of log) {
    const key = keysOf(event.payload).find((k) => (left.get(k) ?? 0) > 0);
    if (key) left.set(key, left.get(key) - 1);
    else count(unexpected, event.type);
  }
  report = {
    logged: log.length,
    received: receiver.ids.size,
    badSignatures: receiver.badSignatures(),
    unexpected: Object.fromEntries(unexpected),
  };
} finally {
  await receiver?.close();
  await sandbox.stop();
}

const rows = PARTS.map((part) => ({ part, ...figures[part] }));
// The whole run: its parts' times added up run by run.
rows.push({
  part: "whole run",
  wallMs: figures.payment.wallMs.map((_, i) =>
    PARTS.reduce((sum, part) => sum + figures[part].wallMs[i], 0),
  ),
  requests: rows.reduce((sum, r) => sum + r.requests, 0),
  cpuMs: rows.reduce((sum, r) => sum + r.cpuMs, 0),
  postgresCpuMs: rows.reduce((sum, r) => sum + r.postgresCpuMs, 0),
  webhookLagMs: [],
});
const summary = rows.map((r) => ({
  scenario: r.part,
  requestsPerRun: r.requests / runs,
  medianMs: median(r.wallMs),
  p90Ms: percentile(
    [...r.wallMs].sort((a, b) => a - b),
    0.9,
  ),
  serverCpuMsPerRun: r.cpuMs / runs,
  ...(onPostgres ? { postgresCpuMsPerRun: r.postgresCpuMs / runs } : {}),
  ...(r.webhookLagMs.length > 0 ? { lastWebhookAfterMs: median(r.webhookLagMs) } : {}),
}));

console.log(
  `\n${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, ${args.database}, ${runs} runs (after ${warmupRuns} warm-up runs), one request at a time\n`,
);
console.log(
  `| Scenario | Requests | Median ms | p90 ms | Server CPU ms/run |${onPostgres ? " PostgreSQL CPU ms/run |" : ""} Its last webhook after its last answer, median ms |`,
);
console.log(`|---|---|---|---|---|${onPostgres ? "---|" : ""}---|`);
for (const s of summary) {
  console.log(
    `| ${s.scenario} | ${s.requestsPerRun} | ${s.medianMs.toFixed(1)} | ${s.p90Ms.toFixed(1)} | ${s.serverCpuMsPerRun.toFixed(1)} |${onPostgres ? ` ${s.postgresCpuMsPerRun.toFixed(1)} |` : ""} ${s.lastWebhookAfterMs?.toFixed(1) ?? "–"} |`,
  );
}
console.log(
  `\nWebhooks: ${report.logged} events logged, ${report.received} received with a good signature, ${report.badSignatures} with a bad one`,
);
const unexpectedTypes = Object.entries(report.unexpected);
if (unexpectedTypes.length > 0) {
  console.log(
    `Events the suite did not wait for: ${unexpectedTypes.map(([type, n]) => `${type} × ${n}`).join(", ")}`,
  );
}
if (report.badSignatures > 0 || report.received !== report.logged) {
  console.log("\nNOT VALID: a webhook was not received, or not verified");
  process.exitCode = 1;
}
console.log(`\n${JSON.stringify({ summary, webhooks: report })}`);
