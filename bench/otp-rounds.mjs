// The OTP login's batch rounds for operations.mjs: its three legs measured on
// the sandbox, on Prism and on three bare servers (one per leg). Each of its
// requests can be made only once, so a round is a batch of one-time requests
// (see operations.mjs's header). What the rounds read of operations.mjs's run
// (its sandbox, Prism, labels, flags) comes in as `bench`.
import * as crypto from "@payments-sandbox/crypto";
import { sealedOtpVerify } from "./otp-client.mjs";
import { measureRound, startBareServer } from "./processes.mjs";

// An id in the form the spec's patterns accept, for Prism's static answers.
const PRISM_AUTH_METHOD = "AuthMethod:09b2f9f8-e00e-4121-bd88-33f111fc0002";

/** The OTP login's legs, in the order a login takes them. */
export const otpLegs = [
  { name: "otpChallenge", title: "POST /auth/credentials/{id}/challenge" },
  { name: "otpVerify", title: "POST /auth/credentials/{id}/verify (202)" },
  { name: "otpRetry", title: "POST /auth/credentials/{id}/verify, signed (200)" },
];

/** Runs `fn` over `items`, `lanes` at a time. */
async function inLanes(items, lanes, fn) {
  let next = 0;
  const out = new Array(items.length);
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return out;
}

/**
 * A batch of one-time requests as a target: its `connections` are opened
 * first (one unmeasured `GET /customers?limit=1` each, with `headers`), then
 * each takes the next request of the list, and the round ends when all are
 * answered. `onAnswer` sees each answer's status and body.
 */
function batchTarget(connections, label, base, pid, headers, list, onAnswer) {
  return {
    label,
    pid,
    batch: {
      base,
      connections,
      list,
      open: { method: "GET", path: "/customers?limit=1", headers },
      onAnswer,
    },
  };
}

/**
 * Wallets with an EMAIL_OTP credential each: a customer holding USDB is
 * opened with its embedded wallet, and the wallet with an EMAIL_OTP
 * credential on the customer's email.
 */
function otpCredentials({ sandbox, customerBody }, count) {
  return inLanes(
    Array.from({ length: count }, (_, i) => i),
    16,
    async (i) => {
      const email = `bench-${i}@example.com`;
      const customer = await sandbox.call("POST", "/customers", {
        ...customerBody,
        email,
        currencies: ["USDB"],
      });
      const wallets = await sandbox.call(
        "GET",
        `/customers/internal-accounts?customerId=${customer.id}`,
      );
      const methods = await sandbox.call(
        "GET",
        `/auth/credentials?accountId=${wallets.data[0].id}`,
      );
      return methods.data[0].id;
    },
  );
}

/** Whether a one-time request was answered as expected; the first surprise is printed. */
let surprised = false;
function answered(status, expected, leg, body) {
  if (status === expected) return true;
  if (!surprised) console.error(`${leg}: ${status} ${body}`);
  surprised = true;
  return false;
}

/**
 * One round of the OTP login on the sandbox: the three legs' batches over
 * `methods`, each measured; between them the bench seals and stamps as a
 * client does (not measured). Returns a result per leg.
 */
async function sandboxLoginRound({ sandbox, labels, connections }, methods, enclaveKey) {
  // Rate limits count per credential over a sliding minute: each round starts
  // in a minute of its own.
  await sandbox.call("POST", "/sandbox/clock/advance", { seconds: 61 });
  const label = labels.sandbox;
  const headers = sandbox.headers;
  const targets = new Map();
  const challenge = await measureRound(
    batchTarget(
      connections,
      label,
      sandbox.base,
      sandbox.pid,
      headers,
      methods.map((id) => ({
        method: "POST",
        path: `/auth/credentials/${id}/challenge`,
        headers,
        body: {},
      })),
      (status, body) => {
        if (!answered(status, 200, "challenge", body)) return;
        const answer = JSON.parse(body);
        targets.set(answer.id, answer.otpEncryptionTargetBundle);
      },
    ),
  );
  const sealed = new Map();
  const verifies = await inLanes(methods, 8, async (id) => {
    const { targetPublic } = crypto.verifyOtpTargetBundle(targets.get(id), enclaveKey);
    const { tek, body } = await sealedOtpVerify(targetPublic);
    sealed.set(tek.publicKeyHex, { id, body, tek });
    return { method: "POST", path: `/auth/credentials/${id}/verify`, headers, body };
  });
  // The answers are kept as they come and stamped after the round: the
  // client's signatures are not the server's load.
  const challenges = [];
  const verify = await measureRound(
    batchTarget(
      connections,
      label,
      sandbox.base,
      sandbox.pid,
      headers,
      verifies,
      (status, body) => {
        if (answered(status, 202, "verify", body)) challenges.push(JSON.parse(body));
      },
    ),
  );
  const retries = challenges.map((answer) => {
    const login = sealed.get(JSON.parse(answer.payloadToSign).parameters.publicKey);
    return {
      method: "POST",
      path: `/auth/credentials/${login.id}/verify`,
      headers: {
        ...headers,
        "service-wallet-signature": crypto.createStamp(
          answer.payloadToSign,
          login.tek.privateKeyHex,
        ),
        "request-id": answer.requestId,
      },
      body: login.body,
    };
  });
  const retry = await measureRound(
    batchTarget(connections, label, sandbox.base, sandbox.pid, headers, retries, (status, body) =>
      answered(status, 200, "retry", body),
    ),
  );
  return [challenge, verify, retry];
}

/**
 * The same three requests, as often, against a target that keeps no state:
 * Prism, or the bare servers (`servers`, one per leg).
 */
async function staticLoginRound({ prismHeaders, connections }, label, servers, count) {
  const path = `/auth/credentials/${PRISM_AUTH_METHOD}`;
  const target = crypto.generateP256KeyPair();
  const { tek, body } = await sealedOtpVerify(target.publicKeyUncompressedHex);
  const signed = {
    ...prismHeaders,
    "service-wallet-signature": crypto.createStamp("{}", tek.privateKeyHex),
    "request-id": "Request:946f7ee8-0978-45e7-a3dd-2324bb67061a",
  };
  const legs = [
    { method: "POST", path: `${path}/challenge`, headers: prismHeaders, body: {} },
    // Prism answers its first declared success unless asked for another.
    {
      method: "POST",
      path: `${path}/verify`,
      headers: { ...prismHeaders, prefer: "code=202" },
      body,
    },
    { method: "POST", path: `${path}/verify`, headers: signed, body },
  ];
  const results = [];
  for (const [i, leg] of legs.entries()) {
    const { base, pid } = servers[i];
    results.push(
      await measureRound(
        batchTarget(connections, label, base, pid, prismHeaders, Array(count).fill(leg)),
      ),
    );
  }
  return results;
}

/**
 * The sandbox's answers to one login's three requests (challenge, verify,
 * signed retry), on a credential of its own: what the bare servers serve.
 */
async function captureLoginAnswers({ sandbox, captureAnswer }, methodId, enclaveKey) {
  const post = (leg, body, headers = {}) =>
    captureAnswer({
      url: `${sandbox.base}/auth/credentials/${methodId}/${leg}`,
      method: "POST",
      headers: { ...sandbox.headers, ...headers },
      body: JSON.stringify(body),
    });
  const challenge = await post("challenge", {});
  const { targetPublic } = crypto.verifyOtpTargetBundle(
    JSON.parse(challenge.body).otpEncryptionTargetBundle,
    enclaveKey,
  );
  const { tek, body } = await sealedOtpVerify(targetPublic);
  const verify = await post("verify", body);
  const answer = JSON.parse(verify.body);
  const retry = await post("verify", body, {
    "service-wallet-signature": crypto.createStamp(answer.payloadToSign, tek.privateKeyHex),
    "request-id": answer.requestId,
  });
  return [challenge, verify, retry];
}

/**
 * The OTP login's warm-up and `bench.rounds` rounds on the three targets, in
 * `bench.inOrder`'s rotation. `bench` holds the run's `root`, `sandbox`,
 * `prism`, `prismHeaders`, `customerBody`, target `labels` ({ sandbox, prism,
 * bare }), `connections`, `logins`, `rounds`, `inOrder` and `captureAnswer`.
 * Returns each round's result per leg, as operations.mjs records its rounds.
 */
export async function measureOtpLogin(bench) {
  const { root, prism, labels, logins, rounds, inOrder } = bench;
  const perRound = [];
  // One credential more, whose login gives the bare servers their answers.
  const methods = await otpCredentials(bench, logins + 1);
  const { otpEnclavePublicKey } = await bench.sandbox.call("GET", "/sandbox/keys");
  const captured = await captureLoginAnswers(bench, methods.pop(), otpEnclavePublicKey);
  const bare = [];
  try {
    for (const answer of captured) bare.push(await startBareServer(root, answer));
    const sides = [
      (count) => sandboxLoginRound(bench, methods.slice(0, count), otpEnclavePublicKey),
      (count) => staticLoginRound(bench, labels.prism, [prism, prism, prism], count),
      (count) => staticLoginRound(bench, labels.bare, bare, count),
    ];
    // Warm-up: a smaller round on each target.
    const warm = Math.min(logins, 1500);
    for (const side of sides) await side(warm);
    const record = (round, results) =>
      results.forEach((result, i) =>
        perRound.push({ operation: otpLegs[i].name, round, ...result }),
      );
    for (let round = 1; round <= rounds; round++) {
      for (const side of inOrder(sides, round)) record(round, await side(logins));
    }
  } finally {
    for (const server of bare) await server.stop();
  }
  return perRound;
}
