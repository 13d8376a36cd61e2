import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import {
  createStamp,
  generateP256KeyPair,
  sealOtpBundle,
  verifyOtpTargetBundle,
} from "@payments-sandbox/crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AUTH_RATE_LIMITS } from "../src/areas/auth/rate-limits.js";
import { API_BASE_PATH } from "../src/config.js";
import { parseDatabaseUrl } from "../src/db/client.js";
import { Database } from "../src/db/database.js";
import { q } from "../src/db/query.js";
import { repoRoot } from "../src/paths.js";
import { databases, freshDatabase, type TestDatabase } from "./harness.js";
import { bankAccountInfo, countRows, expectLedgersBalanced } from "./money-helpers.js";

// Stopping the built server as CI jobs and process supervisors do: SIGTERM
// while keep-alive clients have requests in flight, with the parent no
// longer reading the server's output. Every stop must end by itself, within
// its deadline, with nothing left half-done.

const mainJs = join(repoRoot, "apps/server/dist/main.js");
const TOKEN_ID = "shutdown-test";
const SECRET = "shutdown-test-secret";
const AUTH = `Basic ${Buffer.from(`${TOKEN_ID}:${SECRET}`).toString("base64")}`;
/** The stop deadline the load test runs with (SHUTDOWN_TIMEOUT_MS). */
const DEADLINE_MS = 5_000;
const STOPS = 10;

interface ServerProcess {
  child: ChildProcess;
  port: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
});

async function startServerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [mainJs], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      LOG_LEVEL: "info",
      DATABASE_URL: databaseUrl,
      SANDBOX_TOKEN_ID: TOKEN_ID,
      SANDBOX_TOKEN_SECRET: SECRET,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  // "close", not "exit": by then everything it wrote has been read.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const started = () => {
      const m = /Base URL:\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
      if (m) resolve(Number(m[1]));
    };
    child.stdout!.on("data", started);
    void exited.then(({ code }) => reject(new Error(`exited (${code}):\n${stdout}${stderr}`)));
  });
  return { child, port, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Waits for the exit, or gives up after `ms` (the process is then killed). */
async function exitWithin(server: ServerProcess, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    server.exited,
    new Promise<"still running">((resolve) => {
      timer = setTimeout(() => resolve("still running"), ms);
    }),
  ]);
  clearTimeout(timer);
  if (result === "still running") server.child.kill("SIGKILL");
  return result;
}

interface Answer {
  /** 0: no answer (connection refused, reset, or the client hung up). */
  status: number;
  body: Record<string, unknown> | undefined;
  /** Method and path, to say which request a failure was. */
  request: string;
}

/**
 * One API call on a keep-alive agent. `vanishAfterMs`: the client hangs up
 * that long after sending, whether or not the answer came.
 */
function call(
  agent: http.Agent,
  port: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  vanishAfterMs?: number,
): Promise<Answer> {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        agent,
        host: "127.0.0.1",
        port,
        method,
        path: `${API_BASE_PATH}${path}`,
        headers: {
          Authorization: AUTH,
          ...(data === undefined ? {} : { "Content-Type": "application/json" }),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
            request: `${method} ${path}`,
          }),
        );
        res.on("error", () =>
          resolve({ status: 0, body: undefined, request: `${method} ${path}` }),
        );
      },
    );
    req.on("error", () => resolve({ status: 0, body: undefined, request: `${method} ${path}` }));
    if (vanishAfterMs !== undefined) setTimeout(() => req.destroy(), vanishAfterMs);
    req.end(data);
  });
}

/** What the clients were told, to check against the database afterwards. */
interface Outcomes {
  customers: string[];
  transfers: { key: string; id: string }[];
  statuses: Map<number, number>;
  /** Answers of 500 and above that came after the SIGTERM: a stop must never cause one. */
  serverErrors: Answer[];
  signalled: boolean;
  /** When each challenge of the busy credential that was answered 200 was sent and answered (ms). */
  busyPasses: { sent: number; answered: number }[];
}

function count(outcomes: Outcomes, answer: Answer): Answer {
  outcomes.statuses.set(answer.status, (outcomes.statuses.get(answer.status) ?? 0) + 1);
  if (answer.status >= 500 && outcomes.signalled) outcomes.serverErrors.push(answer);
  return answer;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Requests that got an answer so far. */
function answered(outcomes: Outcomes): number {
  let n = 0;
  for (const [status, times] of outcomes.statuses) if (status !== 0) n += times;
  return n;
}

interface Fixtures {
  internalAccountId: string;
  externalAccountId: string;
  /** Fresh credentials, one per stop, for OTP logins. */
  loginMethodIds: string[];
  /** One credential asked for codes over and over: answered 429 past its limit. */
  busyMethodId: string;
}

async function createFixtures(port: number, wallets: number): Promise<Fixtures> {
  const agent = new http.Agent({ keepAlive: true });
  const created = async (path: string, body: unknown) => {
    const answer = await call(agent, port, "POST", path, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body!;
  };
  const email = `shutdown-${randomUUID().slice(0, 8)}@example.com`;
  const customer = await created("/customers", {
    customerType: "INDIVIDUAL",
    fullName: "Ada Lovelace",
    email,
  });
  const customerId = customer.id as string;
  const accounts = await call(
    agent,
    port,
    "GET",
    `/customers/internal-accounts?customerId=${customerId}`,
  );
  const account = (accounts.body as { data: { id: string }[] }).data[0]!;
  const bank = await created("/customers/external-accounts", {
    customerId,
    currency: "USD",
    accountInfo: bankAccountInfo("789"),
  });
  // One wallet per customer (opened with USDB), each with its first credential.
  const methodIds: string[] = [];
  for (let i = 0; i <= wallets; i++) {
    const holder = await created("/customers", {
      customerType: "INDIVIDUAL",
      fullName: "Ada Lovelace",
      email,
      currencies: ["USDB"],
    });
    const listed = await call(
      agent,
      port,
      "GET",
      `/customers/internal-accounts?customerId=${holder.id as string}`,
    );
    const wallet = (listed.body as { data: { id: string }[] }).data[0]!;
    // The wallet opens with an EMAIL_OTP credential on the holder's email.
    const methods = await call(agent, port, "GET", `/auth/credentials?accountId=${wallet.id}`);
    methodIds.push((methods.body as { data: { id: string }[] }).data[0]!.id);
  }
  agent.destroy();
  return {
    internalAccountId: account.id as string,
    externalAccountId: bank.id as string,
    loginMethodIds: methodIds.slice(1),
    busyMethodId: methodIds[0]!,
  };
}

/**
 * Keep-alive clients, each looping until `stopped()`: customers created,
 * transfers in with an Idempotency-Key, OTP logins with their signed retry,
 * codes asked for on one credential over and over (answered 429 past its
 * limit), and clients that hang up mid-request.
 */
function driveLoad(
  port: number,
  fixtures: Fixtures,
  stop: number,
  outcomes: Outcomes,
  stopped: () => boolean,
) {
  const agents: http.Agent[] = [];
  const client = async (work: (agent: http.Agent) => Promise<void>) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    while (!stopped()) await work(agent);
  };
  const customer = () => ({
    customerType: "INDIVIDUAL",
    fullName: "Grace Hopper",
    email: `grace-${randomUUID().slice(0, 8)}@example.com`,
  });
  const transferIn = async (agent: http.Agent, vanishAfterMs?: number) => {
    const key = randomUUID();
    const answer = count(
      outcomes,
      await call(
        agent,
        port,
        "POST",
        "/transfer-in",
        {
          source: { accountId: fixtures.externalAccountId },
          destination: { accountId: fixtures.internalAccountId },
          amount: 100,
        },
        { "Idempotency-Key": key },
        vanishAfterMs,
      ),
    );
    if (answer.status === 201) outcomes.transfers.push({ key, id: answer.body!.id as string });
  };
  let enclaveKey: string | undefined;
  const otpLogin = async (agent: http.Agent, methodId: string) => {
    const methodPath = `/auth/credentials/${methodId}`;
    enclaveKey ??= (await call(agent, port, "GET", "/config")).body?.otpEnclavePublicKey as
      string | undefined;
    const challenge = count(
      outcomes,
      await call(agent, port, "POST", `${methodPath}/challenge`, {}),
    );
    if (challenge.status !== 200 || enclaveKey === undefined) return;
    const { targetPublic } = verifyOtpTargetBundle(
      challenge.body!.otpEncryptionTargetBundle as string,
      enclaveKey,
    );
    const tek = generateP256KeyPair();
    const body = {
      type: "EMAIL_OTP",
      encryptedOtpBundle: await sealOtpBundle({
        otpCode: "000000",
        tekPublicKeyHex: tek.publicKeyHex,
        targetPublicKeyHex: targetPublic,
      }),
    };
    const first = count(outcomes, await call(agent, port, "POST", `${methodPath}/verify`, body));
    if (first.status !== 202) return;
    count(
      outcomes,
      await call(agent, port, "POST", `${methodPath}/verify`, body, {
        "Service-Wallet-Signature": createStamp(
          first.body!.payloadToSign as string,
          tek.privateKeyHex,
        ),
        "Request-Id": first.body!.requestId as string,
      }),
    );
  };
  const clients = [
    client(async (agent) => {
      const answer = count(outcomes, await call(agent, port, "POST", "/customers", customer()));
      if (answer.status === 201) outcomes.customers.push(answer.body!.id as string);
    }),
    client((agent) => transferIn(agent)),
    client((agent) => transferIn(agent)),
    client((agent) => otpLogin(agent, fixtures.loginMethodIds[stop - 1]!)),
    client(async (agent) => {
      const path = `/auth/credentials/${fixtures.busyMethodId}/challenge`;
      const sent = Date.now();
      const answer = count(outcomes, await call(agent, port, "POST", path, {}));
      if (answer.status === 200) outcomes.busyPasses.push({ sent, answered: Date.now() });
    }),
    // Clients that vanish: their requests may or may not have been done.
    client(async (agent) => {
      await transferIn(agent, Math.random() * 15);
      await pause(200);
    }),
    client(async (agent) => {
      count(
        outcomes,
        await call(agent, port, "POST", "/customers", customer(), {}, Math.random() * 15),
      );
      await pause(200);
    }),
  ];
  return Promise.all(clients).finally(() => agents.forEach((a) => a.destroy()));
}

describe.each(databases)("stopping the server process on %s", (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(kind);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it(
    `ends every one of ${STOPS} SIGTERMs under keep-alive load by itself, within the deadline, with nothing half-written`,
    async () => {
      const outcomes: Outcomes = {
        customers: [],
        transfers: [],
        statuses: new Map(),
        serverErrors: [],
        signalled: false,
        busyPasses: [],
      };
      let fixtures: Fixtures | undefined;
      for (let stop = 1; stop <= STOPS; stop++) {
        const server = await startServerProcess(database.url, {
          SHUTDOWN_TIMEOUT_MS: String(DEADLINE_MS),
        });
        fixtures ??= await createFixtures(server.port, STOPS);
        outcomes.signalled = false;
        const load = driveLoad(server.port, fixtures, stop, outcomes, () => outcomes.signalled);
        // SIGTERM once the load is well under way (a cold process answers
        // its first requests slowly, and the busy credential has reached its
        // limit), at a random moment.
        const answeredBefore = answered(outcomes);
        const underWay = () =>
          answered(outcomes) >= answeredBefore + 6 && outcomes.statuses.has(429);
        while (!underWay() && server.child.exitCode === null) {
          await pause(10);
        }
        await pause(Math.random() * 150);
        // As the reported parent did: SIGTERM, then no more reading of stdout.
        server.child.kill("SIGTERM");
        server.child.stdout!.destroy();
        outcomes.signalled = true;
        const exit = await exitWithin(server, DEADLINE_MS + 3_000);
        expect(exit, `stop ${stop} of ${STOPS}:\n${server.stderr()}`).toEqual({
          code: 0,
          signal: null,
        });
        await load;
      }

      const seen = Object.fromEntries(outcomes.statuses);
      // The run did what it claims: creations answered 201, and 429s.
      expect(seen, JSON.stringify(seen)).toMatchObject({
        201: expect.any(Number),
        429: expect.any(Number),
      });
      // A stop never turned a request into a server error.
      expect(outcomes.serverErrors).toEqual([]);

      const db = Database.open(parseDatabaseUrl(database.url));
      try {
        // Every answered creation is there.
        const customerIds = outcomes.customers;
        expect(await countRows(db, q.selectFrom("Customer").where("id", "in", customerIds))).toBe(
          customerIds.length,
        );
        const transferIds = outcomes.transfers.map((t) => t.id);
        expect(
          await countRows(db, q.selectFrom("Transaction").where("id", "in", transferIds)),
        ).toBe(transferIds.length);
        // No Idempotency-Key is left claimed by a request that never finished
        // (its retry would be refused with 409 until the claim ran out).
        expect(
          await db.all(
            q.selectFrom("IdempotencyRecord").selectAll().where("status", "=", "IN_PROGRESS"),
          ),
        ).toEqual([]);
        const completed = await db.all(
          q
            .selectFrom("IdempotencyRecord")
            .select(["status", "responseStatus"])
            .where(
              "key",
              "in",
              outcomes.transfers.map((t) => t.key),
            ),
        );
        expect(completed).toHaveLength(outcomes.transfers.length);
        expect(completed.every((r) => r.status === "COMPLETED" && r.responseStatus === 201)).toBe(
          true,
        );
        // Balances match their ledger entries.
        await expectLedgersBalanced(db);
        // A refused (429) attempt is not counted, and the limit held across
        // the stops: no window passed more than the limit's challenges (the
        // client sends them one at a time, so a pass's time lies between its
        // sending and its answer).
        const { limit, windowSeconds } = AUTH_RATE_LIMITS.challenge;
        const passes = outcomes.busyPasses;
        expect(passes.length).toBeGreaterThan(0);
        for (let i = 0; i + limit < passes.length; i++) {
          const span = passes[i + limit]!.answered - passes[i]!.sent;
          expect(span).toBeGreaterThanOrEqual(windowSeconds * 1000);
        }
      } finally {
        await db.close();
      }
    },
    // About 45 s on an idle machine; far more when the cores are shared.
    STOPS * 25_000,
  );

  /** A client that sends a request's headers and only part of its body, and waits. */
  async function stuckUpload(port: number) {
    const socket = connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.on("error", () => undefined);
    socket.write(
      [
        `POST ${API_BASE_PATH}/customers HTTP/1.1`,
        "Host: 127.0.0.1",
        `Authorization: ${AUTH}`,
        "Content-Type: application/json",
        "Content-Length: 200",
        "",
        '{"customerType":',
      ].join("\r\n"),
    );
    // Until the server has read the headers, the request is not begun.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return socket;
  }

  it("gives up at the deadline with a non-zero exit, saying what it was waiting for", async () => {
    const deadlineMs = 1_500;
    const server = await startServerProcess(database.url, {
      SHUTDOWN_TIMEOUT_MS: String(deadlineMs),
    });
    const socket = await stuckUpload(server.port);
    try {
      const started = Date.now();
      server.child.kill("SIGTERM");
      const exit = await exitWithin(server, deadlineMs + 5_000);
      const elapsed = Date.now() - started;
      expect(exit).toEqual({ code: 1, signal: null });
      expect(elapsed).toBeGreaterThanOrEqual(deadlineMs - 50);
      expect(server.stderr()).toContain(
        `shutdown timed out after ${deadlineMs} ms, still waiting for 1 request in flight`,
      );
      const logged = server
        .stdout()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.msg === "shutdown timed out");
      expect(logged).toMatchObject({ level: 50, waitingFor: "1 request in flight" });
    } finally {
      socket.destroy();
    }
  });

  it("exits at once on a second SIGTERM", async () => {
    // The default deadline (10 s): the second signal must not wait for it.
    const server = await startServerProcess(database.url);
    const socket = await stuckUpload(server.port);
    try {
      const started = Date.now();
      server.child.kill("SIGTERM");
      while (!server.stdout().includes('"msg":"shutting down"')) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      server.child.kill("SIGTERM");
      const exit = await exitWithin(server, 10_000);
      // 143 (128 + SIGTERM), not the deadline's 1, and before the deadline.
      expect(exit).toEqual({ code: 143, signal: null });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(server.stderr()).toContain("SIGTERM again while shutting down: exiting now");
    } finally {
      socket.destroy();
    }
  });
});
