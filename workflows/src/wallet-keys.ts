// The wallet's key holder for the Arazzo workflows: a small local HTTP
// service that does the client-side cryptography an embedded-wallet app does
// (make a P-256 key, seal the OTP code with HPKE, stamp a payload), so the
// workflows can call it as a step. Private keys stay in this process; the API
// only ever sees public keys, sealed bundles and stamps. Its operations are
// described in wallet-keys.openapi.yaml.
//
//   npm run wallet-keys -w @payments-sandbox/workflows   # prints {"url": "http://127.0.0.1:<port>"}
//
// Environment: WALLET_KEYS_PORT (default 0: any free port), and
// OTP_ENCLAVE_PUBLIC_KEY, the enclave key the target bundles must be signed
// with (uncompressed hex; the sandbox publishes its own at GET /sandbox/keys).
// With it, a bundle signed by any other key is refused before anything is
// sealed to it.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import {
  createStamp,
  generateP256KeyPair,
  hexToBytes,
  sealOtpBundle,
  verifyOtpTargetBundle,
} from "@payments-sandbox/crypto";

/** The OTP target key inside a bundle, checked against the enclave key when one is known. */
function targetPublicOf(bundle: string, enclavePublicKey: string | undefined): string {
  if (enclavePublicKey) return verifyOtpTargetBundle(bundle, enclavePublicKey).targetPublic;
  const outer = JSON.parse(bundle) as { data?: unknown };
  if (typeof outer.data !== "string") throw new Error("the bundle has no data");
  const data = JSON.parse(new TextDecoder().decode(hexToBytes(outer.data))) as {
    targetPublic?: unknown;
  };
  if (typeof data.targetPublic !== "string") throw new Error("the bundle names no targetPublic");
  return data.targetPublic;
}

type Body = Record<string, unknown>;

function send(res: ServerResponse, status: number, body?: object): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Body> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const parsed: unknown = text === "" ? {} : JSON.parse(text);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error("the body must be a JSON object");
  }
  return parsed as Body;
}

function requireString(body: Body, name: string): string {
  const value = body[name];
  if (typeof value !== "string" || value === "")
    throw new Error(`${name} must be a non-empty string`);
  return value;
}

/**
 * Starts the key holder. Resolves once it listens, with its URL and a stop
 * function.
 */
export async function startWalletKeys(
  options: { port?: number; enclavePublicKey?: string | undefined } = {},
): Promise<{ url: string; stop: () => Promise<void> }> {
  const { port = 0, enclavePublicKey } = options;
  // publicKey (compressed hex) -> private key hex; nothing is written to disk.
  const keys = new Map<string, string>();

  type Route = (
    privateKey: string,
    publicKey: string,
    body: Body,
  ) => Promise<[number, object | undefined]>;
  const routes: Record<string, Route> = {
    "POST /keys": async () => {
      const pair = generateP256KeyPair();
      keys.set(pair.publicKeyHex, pair.privateKeyHex);
      return [201, { publicKey: pair.publicKeyHex }];
    },
    "POST /keys/{publicKey}/otp-bundle": async (_privateKey, publicKey, body) => {
      const targetPublic = targetPublicOf(
        requireString(body, "otpEncryptionTargetBundle"),
        enclavePublicKey,
      );
      const encryptedOtpBundle = await sealOtpBundle({
        otpCode: requireString(body, "otpCode"),
        tekPublicKeyHex: publicKey,
        targetPublicKeyHex: targetPublic,
      });
      return [200, { encryptedOtpBundle }];
    },
    "POST /keys/{publicKey}/stamp": async (privateKey, _publicKey, body) => {
      return [200, { stamp: createStamp(requireString(body, "payloadToSign"), privateKey) }];
    },
    "DELETE /keys/{publicKey}": async (_privateKey, publicKey) => {
      keys.delete(publicKey);
      return [204, undefined];
    },
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = url.pathname.split("/").filter(Boolean);
    const publicKey = parts[0] === "keys" && parts.length >= 2 ? parts[1] : undefined;
    const pattern = publicKey
      ? ["", "keys", "{publicKey}", ...parts.slice(2)].join("/")
      : url.pathname;
    const route = routes[`${req.method} ${pattern}`];
    if (!route) return send(res, 404, { message: `no route ${req.method} ${url.pathname}` });
    void (async () => {
      const body = req.method === "POST" ? await readJson(req) : {};
      // POST /keys names no key; every other route needs one this holder made.
      const privateKey = publicKey === undefined ? "" : keys.get(publicKey);
      if (privateKey === undefined) return send(res, 404, { message: "unknown key" });
      const [status, answer] = await route(privateKey, publicKey ?? "", body);
      send(res, status, answer);
    })().catch((error: unknown) =>
      send(res, 400, { message: error instanceof Error ? error.message : String(error) }),
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold close() for seconds.
        server.closeAllConnections();
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const holder = await startWalletKeys({
    port: Number(process.env.WALLET_KEYS_PORT ?? 0),
    enclavePublicKey: process.env.OTP_ENCLAVE_PUBLIC_KEY || undefined,
  });
  process.stdout.write(`${JSON.stringify({ url: holder.url })}\n`);
  const stop = () => holder.stop().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
