// Keep-alive load on a server process while it is being stopped: what the
// clients send, and what they were told, to check against the database.
import { randomUUID } from "node:crypto";
import http from "node:http";
import {
  createStamp,
  generateP256KeyPair,
  sealOtpBundle,
  verifyOtpTargetBundle,
} from "@payments-sandbox/crypto";
import { expect } from "vitest";
import { API_BASE_PATH } from "../../src/config.js";
import { bankAccountInfo } from "../money-helpers.js";
import { AUTH } from "./shutdown-process.js";

export interface Answer {
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
export interface Outcomes {
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

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Requests that got an answer so far. */
export function answered(outcomes: Outcomes): number {
  let n = 0;
  for (const [status, times] of outcomes.statuses) if (status !== 0) n += times;
  return n;
}

export interface Fixtures {
  internalAccountId: string;
  externalAccountId: string;
  /** Fresh credentials, one per stop, for OTP logins. */
  loginMethodIds: string[];
  /** One credential asked for codes over and over: answered 429 past its limit. */
  busyMethodId: string;
}

export async function createFixtures(port: number, wallets: number): Promise<Fixtures> {
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
export function driveLoad(
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
