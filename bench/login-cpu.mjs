#!/usr/bin/env node
// Server CPU of an OTP login (challenge, verify, signed retry), two ways:
//
// 1. By operation: every cryptographic step the server takes on that path,
//    timed in this process (process.cpuUsage, user + system, after a
//    warm-up), with the portable @payments-sandbox/crypto (@noble/curves, @hpke/core
//    on WebCrypto) that the server used before, and with the server's
//    node:crypto modules (apps/server/dist/crypto) when they are built.
// 2. End to end (--logins N, default 200; 0 skips it): the built server as its
//    own process, N complete OTP logins, each on a fresh wallet, one after
//    another or --concurrency at a time, the client's crypto running here; the
//    server's CPU time from /proc over the logins only (wallets are made
//    beforehand).
//
//   npm run build
//   node bench/login-cpu.mjs [--iterations 300] [--logins 200] [--warmup-logins 1000] [--concurrency 1]
//        [--database sqlite|postgresql] [--main apps/server/dist/main.js] [--no-ops]
//
// --main runs another build of the server end to end (e.g. one of an older
// commit, to compare under the same machine load); --no-ops skips part 1.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import * as portable from "@payments-sandbox/crypto";
import { sealedOtpVerify } from "./otp-client.mjs";
import { cpuMs, freePort, threadCpuMs } from "./processes.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    iterations: { type: "string", default: "300" },
    logins: { type: "string", default: "200" },
    // Logins before the measured ones, on wallets of their own: the server's
    // login path is compiled and its caches warm, as after a few seconds of
    // any real use (the request benches warm up for 3 s the same way). The
    // cost per login kept falling up to several hundred logins in.
    "warmup-logins": { type: "string", default: "1000" },
    concurrency: { type: "string", default: "1" },
    database: { type: "string", default: "sqlite" },
    main: { type: "string", default: "apps/server/dist/main.js" },
    "no-ops": { type: "boolean", default: false },
    "postgres-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/test" },
  },
});
const iterations = Number(args.iterations);
const logins = Number(args.logins);
const concurrency = Math.max(1, Number(args.concurrency));
const VERSION = "/2025-10-13";

// ---------------------------------------------------------------------------
// 1. By operation
// ---------------------------------------------------------------------------

/** The server's node:crypto modules, or undefined before they exist. */
async function loadServerCrypto() {
  const dir = join(root, "apps/server/dist/crypto");
  if (!existsSync(join(dir, "hpke.js"))) return undefined;
  const load = (name) => import(pathToFileURL(join(dir, `${name}.js`)).href);
  const [keys, stamps, bundles, token, sha] = await Promise.all(
    ["p256-keys", "stamps", "bundles", "verification-token", "sha256"].map(load),
  );
  return { ...keys, ...stamps, ...bundles, ...token, ...sha };
}

// What the server called before: @payments-sandbox/crypto, with the retry parsing the
// stamp once for the 401 code and once more inside verifyStamp.
const before = {
  label: "@payments-sandbox/crypto (before)",
  ...portable,
  readStamp: portable.parseStamp,
  createOtpTargetBundle: ({ target: pair, ...rest }) =>
    portable.createOtpTargetBundle({ targetPublicKeyHex: pair.publicKeyUncompressedHex, ...rest }),
  verifyStamp: (_read, header, payload) => portable.verifyStamp(header, payload),
};

function afterOf(server) {
  return {
    label: "node:crypto (after)",
    ...server,
    verifyStamp: (read, _header, payload) => server.verifyStamp(read, payload),
  };
}

// Fixed inputs, made by a client with the portable library.
const enclave = portable.generateP256KeyPair();
const target = portable.generateP256KeyPair();
const tek = portable.generateP256KeyPair();
const clientKey = portable.generateP256KeyPair();
const encryptedOtpBundle = await portable.sealOtpBundle({
  otpCode: "000000",
  tekPublicKeyHex: tek.publicKeyHex,
  targetPublicKeyHex: target.publicKeyUncompressedHex,
});
const binding = JSON.stringify({
  authMethodId: "AuthMethod:019a7f0e-8a47-7b1e-9c36-0a0f3f1f4a11",
  body: { encryptedOtpBundle, type: "EMAIL_OTP" },
});
const tokenInput = {
  id: "2f0d6f9e-0b6f-4d55-9d57-3f1a2b4c5d6e",
  verificationType: "OTP_TYPE_EMAIL",
  contact: "user@example.com",
  organizationId: "Platform:019a7f0e-0000-7000-8000-000000000001",
  publicKey: tek.publicKeyHex,
  expiresAtMs: 1_900_000_000_000,
};
const verificationToken = portable.issueVerificationToken(tokenInput, enclave.privateKeyHex);
const payloadToSign = JSON.stringify({
  organizationId: tokenInput.organizationId,
  parameters: { publicKey: tek.publicKeyHex, verificationToken },
  timestampMs: "1763800000000",
  type: "ACTIVITY_TYPE_OTP_LOGIN",
});
const stamp = portable.createStamp(payloadToSign, tek.privateKeyHex);

/** The server's crypto on each leg of an OTP login, and on two other paths. */
const steps = [
  ["challenge", "target key pair", (c) => c.generateP256KeyPair()],
  [
    "challenge",
    "sign the target bundle",
    (c) =>
      c.createOtpTargetBundle({
        target,
        organizationId: tokenInput.organizationId,
        userId: "InternalAccount:019a7f0e-0000-7000-8000-000000000002",
        signingPrivateKeyHex: enclave.privateKeyHex,
      }),
  ],
  [
    "verify",
    "open the OTP bundle (HPKE)",
    (c) => c.openOtpBundle(encryptedOtpBundle, target.privateKeyHex),
  ],
  [
    "verify",
    "sign the verification token",
    (c) => c.issueVerificationToken(tokenInput, enclave.privateKeyHex),
  ],
  ["verify", "binding digest (SHA-256)", (c) => c.sha256Hex(binding)],
  ["retry", "binding digest (SHA-256)", (c) => c.sha256Hex(binding)],
  [
    "retry",
    "read and verify the stamp",
    (c) => c.verifyStamp(c.readStamp(stamp), stamp, payloadToSign),
  ],
  [
    "retry",
    "signer is the bound TEK",
    (c) => c.publicKeysEqual(tek.publicKeyHex, tek.publicKeyHex),
  ],
  ["retry", "session key, compressed", (c) => c.compressPublicKey(tek.publicKeyHex)],
  [
    "other",
    "new session key, sealed (OAuth, passkey, refresh)",
    async (c) => {
      const key = c.generateP256KeyPair();
      return c.sealSessionKeyBundle(key.privateKeyHex, clientKey.publicKeyUncompressedHex);
    },
  ],
  [
    "other",
    "GET /config: the two public keys",
    (c) => [
      c.publicKeyFromPrivateKey(enclave.privateKeyHex, true),
      c.publicKeyFromPrivateKey(enclave.privateKeyHex, false),
    ],
  ],
];

async function cpuMicros(fn) {
  const run = async () => {
    const result = fn();
    if (result && typeof result.then === "function") await result;
  };
  for (let i = 0; i < Math.max(20, iterations / 10); i++) await run();
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

async function byOperation() {
  const server = await loadServerCrypto();
  const impls = [before, ...(server ? [afterOf(server)] : [])];
  const rows = [];
  for (const [leg, name, fn] of steps) {
    const row = { leg, name, cost: [] };
    for (const impl of impls) row.cost.push(await cpuMicros(() => fn(impl)));
    rows.push(row);
  }
  const fmt = (us) => us.toFixed(0).padStart(8);
  console.log(`\nServer crypto by operation, CPU µs per call (${iterations} calls each)\n`);
  console.log(
    `${"leg".padEnd(10)}${"operation".padEnd(52)}${impls.map((i) => i.label.padStart(28)).join("")}`,
  );
  for (const row of rows) {
    console.log(
      `${row.leg.padEnd(10)}${row.name.padEnd(52)}${row.cost.map((c) => fmt(c).padStart(28)).join("")}`,
    );
  }
  const login = rows.filter((r) => r.leg !== "other");
  const total = impls.map((_, i) => login.reduce((sum, r) => sum + r.cost[i], 0));
  console.log(
    `${"".padEnd(10)}${"OTP login, all legs".padEnd(52)}${total.map((c) => fmt(c).padStart(28)).join("")}`,
  );
  if (!server)
    console.log("\n(apps/server/dist/crypto is not built: the node:crypto column is missing)");
}

// ---------------------------------------------------------------------------
// 2. End to end
// ---------------------------------------------------------------------------

async function endToEnd() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "bench-login-"));
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const databaseUrl =
    args.database === "postgresql"
      ? `${args["postgres-url"]}${args["postgres-url"].includes("?") ? "&" : "?"}schema=${schema}`
      : `file:${join(dir, "sandbox.db")}`;
  const tokenId = "bench-token";
  const secret = randomBytes(24).toString("base64url");
  // e.g. BENCH_SERVER_NODE_ARGS=--cpu-prof to see where the server's time goes.
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, args.main], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      SANDBOX_TOKEN_ID: tokenId,
      SANDBOX_TOKEN_SECRET: secret,
      LOG_LEVEL: "warn",
      VALIDATE_RESPONSES: "false",
    },
  });
  let output = "";
  await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (output.includes("Base URL")) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited (${code}):\n${output}`)));
  });
  try {
    const base = `http://127.0.0.1:${port}${VERSION}`;
    const auth = `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`;
    const call = async (method, path, body, headers = {}) => {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: auth, "content-type": "application/json", ...headers },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: await res.json() };
    };
    const expectStatus = (res, status, what) => {
      if (res.status !== status)
        throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const enclaveKey = expectStatus(
      await call("GET", "/sandbox/keys"),
      200,
      "keys",
    ).otpEnclavePublicKey;

    const warmup = Number(args["warmup-logins"]);
    const methods = [];
    for (let i = 0; i < logins + warmup; i++) {
      // A customer holding USDB is opened with its embedded wallet, and the
      // wallet with an EMAIL_OTP credential on the customer's email.
      const email = `bench-${i}@example.com`;
      const customer = expectStatus(
        await call("POST", "/customers", {
          customerType: "INDIVIDUAL",
          fullName: "Bench Mark",
          email,
          currencies: ["USDB"],
        }),
        201,
        "customer",
      );
      const wallets = expectStatus(
        await call("GET", `/customers/internal-accounts?customerId=${customer.id}`),
        200,
        "wallet",
      );
      const listed = expectStatus(
        await call("GET", `/auth/credentials?accountId=${wallets.data[0].id}`),
        200,
        "credential",
      );
      methods.push(listed.data[0].id);
    }

    let clientCpu = 0;
    const login = async (methodId) => {
      const challenge = expectStatus(
        await call("POST", `/auth/credentials/${methodId}/challenge`, {}),
        200,
        "challenge",
      );
      const t0 = process.cpuUsage();
      const { targetPublic } = portable.verifyOtpTargetBundle(
        challenge.otpEncryptionTargetBundle,
        enclaveKey,
      );
      const { tek: key, body } = await sealedOtpVerify(targetPublic);
      let used = process.cpuUsage(t0);
      clientCpu += used.user + used.system;
      const first = expectStatus(
        await call("POST", `/auth/credentials/${methodId}/verify`, body),
        202,
        "verify",
      );
      const t1 = process.cpuUsage();
      const headers = {
        "Service-Wallet-Signature": portable.createStamp(first.payloadToSign, key.privateKeyHex),
        "Request-Id": first.requestId,
      };
      used = process.cpuUsage(t1);
      clientCpu += used.user + used.system;
      expectStatus(
        await call("POST", `/auth/credentials/${methodId}/verify`, body, headers),
        200,
        "retry",
      );
    };

    // `concurrency` logins in flight, each lane taking the next wallet.
    const loginAll = async (list) => {
      let next = 0;
      const lane = async () => {
        while (next < list.length) await login(list[next++]);
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
    };
    await loginAll(methods.slice(0, warmup));
    clientCpu = 0;
    const serverBefore = cpuMs(child.pid);
    const threadsBefore = threadCpuMs(child.pid);
    const started = performance.now();
    await loginAll(methods.slice(warmup));
    const elapsed = performance.now() - started;
    const serverMs = cpuMs(child.pid) - serverBefore;
    // Where that CPU went: the request thread, and each other thread (the
    // crypto and database threads, V8's collector helpers) that did work.
    const threads = [...threadCpuMs(child.pid)]
      .map(([tid, ms]) => ({ tid, ms: ms - (threadsBefore.get(tid) ?? 0) }))
      .filter(({ ms }) => ms > 0)
      .sort((a, b) => (a.tid === child.pid ? -1 : b.tid === child.pid ? 1 : b.ms - a.ms));
    const byThread = threads
      .map(
        ({ tid, ms }) =>
          `${tid === child.pid ? "request thread" : `thread ${tid}`} ${(ms / logins).toFixed(2)}`,
      )
      .join(", ");
    console.log(
      `\nEnd to end (${args.database}, ${args.main}): ${logins} OTP logins, ${concurrency === 1 ? "one after another" : `${concurrency} at a time`}, 3 requests each\n` +
        `  server CPU per login: ${(serverMs / logins).toFixed(2)} ms (user + system, /proc, 10 ms ticks)\n` +
        `    by thread (ms per login): ${byThread}\n` +
        `  client crypto per login (this process): ${(clientCpu / logins / 1000).toFixed(2)} ms\n` +
        `  wall time per login: ${(elapsed / logins).toFixed(1)} ms (${((logins * 1000) / elapsed).toFixed(0)} logins/s)`,
    );
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    await exited;
    rmSync(dir, { recursive: true, force: true });
    if (args.database === "postgresql") {
      const pg = (await import("pg")).default;
      const client = new pg.Client({ connectionString: args["postgres-url"] });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  }
}

console.log(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}`);
if (!args["no-ops"]) await byOperation();
if (logins > 0) await endToEnd();
