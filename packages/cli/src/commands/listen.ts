import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  LEGACY_WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  verifyWebhook,
  webhookSignatureOf,
  type Schemas,
  type WebhookEnvelope,
} from "@payments-sandbox/client";
import { CliError, networkError, ok, type CommandContext } from "../context.js";
import { describeEvent } from "./events.js";

export interface ListenOptions {
  /** Where each verified webhook is POSTed on, unchanged (body and signature). */
  forwardTo?: string;
  host: string;
  port: number;
  /** The URL the sandbox should deliver to, when it cannot reach host:port directly. */
  publicUrl?: string;
}

/** One delivery as `listen` saw it (a JSON line with --json). */
export interface Delivery {
  eventId: string | null;
  type: string | null;
  objectId: string | null;
  verified: boolean;
  forwardedTo?: string;
  forwardStatus?: number;
  forwardError?: string;
  /** The status `listen` answered the sandbox with. */
  answered: number;
}

/** How long a forward may take: the sandbox's own default delivery timeout. */
const FORWARD_TIMEOUT_MS = 10_000;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function envelopeOf(raw: Buffer): Partial<WebhookEnvelope> {
  try {
    return JSON.parse(raw.toString("utf8")) as Partial<WebhookEnvelope>;
  } catch {
    return {};
  }
}

/**
 * `listen [--forward-to URL]`: receives every webhook of the platform.
 *
 * It starts a local receiver and points the platform's webhook endpoint at
 * it (PATCH /config), so deliveries arrive exactly as they would at the
 * partner's server: signed, retried, in order. Each one's X-Grid-Signature
 * (else the deprecated X-Service-Signature) is verified with the platform's
 * key (GET /sandbox/keys) by the client's verifyWebhook; a valid one is
 * printed and forwarded unchanged, under both header names, and the
 * forward target's status is what the sandbox gets back, so its retries
 * follow the real endpoint. A bad signature is answered 400 and not
 * forwarded. On Ctrl-C the previous endpoint is put back and the delivery
 * log (GET /sandbox/webhooks/events: every attempt of each event received)
 * is printed.
 */
export async function listen(ctx: CommandContext, options: ListenOptions): Promise<void> {
  const { api, out } = ctx;
  const config = ok("GET /config", await api.GET("/config"));
  const keys = ok("GET /sandbox/keys", await api.GET("/sandbox/keys"));
  const deliveries: Delivery[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const header = webhookSignatureOf(req.headers);
    const verified = verifyWebhook(raw, header, keys.webhookPublicKey);
    const envelope = envelopeOf(raw);
    const data = envelope.data as { id?: unknown } | undefined;
    const delivery: Delivery = {
      eventId: typeof envelope.id === "string" ? envelope.id : null,
      type: typeof envelope.type === "string" ? envelope.type : null,
      objectId: typeof data?.id === "string" ? data.id : null,
      verified,
      answered: 200,
    };
    if (!verified) {
      delivery.answered = 400;
    } else if (options.forwardTo !== undefined) {
      delivery.forwardedTo = options.forwardTo;
      try {
        const forwarded = await fetch(options.forwardTo, {
          method: "POST",
          headers: {
            "Content-Type": req.headers["content-type"] ?? "application/json",
            // Both names, as the sandbox sends them: the target may read either.
            [WEBHOOK_SIGNATURE_HEADER]: header ?? "",
            [LEGACY_WEBHOOK_SIGNATURE_HEADER]: header ?? "",
          },
          body: new Uint8Array(raw),
          signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
        });
        await forwarded.arrayBuffer();
        delivery.forwardStatus = forwarded.status;
        delivery.answered = forwarded.status;
      } catch (error) {
        delivery.forwardError = networkError(error);
        delivery.answered = 502;
      }
    }
    deliveries.push(delivery);
    res.writeHead(delivery.answered, { "Content-Type": "text/plain" }).end();
    if (out.json) {
      out.jsonLine({ delivery, payload: envelope });
      return;
    }
    const signatureText = verified ? out.ok("signature ✔") : out.bad("signature ✘ (not forwarded)");
    const forwardText =
      delivery.forwardStatus !== undefined
        ? ` → ${options.forwardTo} ${delivery.forwardStatus}`
        : delivery.forwardError !== undefined
          ? ` → ${options.forwardTo} ${out.bad(`failed: ${delivery.forwardError}`)}`
          : "";
    out.line(
      `${new Date().toISOString()}  ${delivery.type ?? "?"}  ${delivery.eventId ?? "?"}  ${delivery.objectId ?? ""}  ${signatureText}${forwardText}`,
    );
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      out.warn(`listen: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(new CliError(`cannot listen on ${options.host}:${options.port}: ${error.message}`)),
    );
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = options.publicUrl ?? `http://${options.host}:${port}/webhooks`;

  try {
    ok("PATCH /config", await api.PATCH("/config", { body: { webhookEndpoint: url } }));
    if (out.json) {
      out.jsonLine({ listening: url, platformId: config.id, forwardTo: options.forwardTo ?? null });
    } else {
      out.line(`Ready. Webhooks of platform ${config.id} now go to ${url}`);
      out.line(
        out.dim(
          `  Each is checked against the platform's webhook key${options.forwardTo ? ` and forwarded to ${options.forwardTo}` : ""}. Ctrl-C to stop.`,
        ),
      );
    }
    await ctx.stopped;
  } finally {
    await restore(ctx, url, config.webhookEndpoint);
    // The sandbox's keep-alive connections would hold close() open.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
  await printDeliveryLog(ctx, deliveries);
}

/** Puts the endpoint back as it was, unless someone changed it meanwhile. */
async function restore(ctx: CommandContext, ours: string, previous: string | undefined) {
  const now = await ctx.api.GET("/config");
  if (now.data?.webhookEndpoint !== ours) return;
  await ctx.api.PATCH("/config", { body: { webhookEndpoint: previous ?? "" } });
  ctx.out.step(
    previous ? `Webhook endpoint set back to ${previous}` : "Webhook endpoint removed again",
  );
}

/** Every attempt of each event received, as the sandbox recorded them. */
async function printDeliveryLog(ctx: CommandContext, deliveries: readonly Delivery[]) {
  const wanted = new Set(deliveries.flatMap((d) => (d.eventId ? [d.eventId] : [])));
  const found: Schemas["WebhookEventRecord"][] = [];
  let cursor: string | undefined;
  // Newest first: the session's events are on the first pages.
  for (let page = 0; page < 20 && found.length < wanted.size; page++) {
    const listed = ok(
      "GET /sandbox/webhooks/events",
      await ctx.api.GET("/sandbox/webhooks/events", {
        params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } },
      }),
    );
    found.push(...listed.data.filter((event) => wanted.has(event.id)));
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  if (ctx.out.json) {
    ctx.out.jsonLine({ deliveryLog: found });
    return;
  }
  ctx.out.line(`Delivery log: ${deliveries.length} webhook(s) received in this session`);
  for (const event of found.reverse()) {
    for (const line of describeEvent(ctx.out, event)) ctx.out.line(`  ${line}`);
  }
}
