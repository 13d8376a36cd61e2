import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SandboxClient } from "@payments-sandbox/client";

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  /** Arrival order across all requests of this receiver, from 0. */
  index: number;
  /** Position on the receiver's event line (arrivals and answers share one counter). */
  arrivedAt: number;
  eventId: string;
  rawBody: string;
  /** X-Grid-Signature, production's header. */
  signature: string | undefined;
  /** X-Service-Signature, the sandbox's old name, still sent alongside. */
  legacySignature: string | undefined;
  contentType: string | undefined;
  /** The status it was answered with; undefined while hanging or if never answered. */
  answeredWith?: number;
  /** Position of the answer on the receiver's event line (not set for hangs and resets). */
  answeredAt?: number;
}

/** What to do with a request: answer with a status, never answer, or drop the connection. */
export type Reply = number | "hang" | "reset";

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decides the reply for each request; change it at any time. */
  reply: (request: ReceivedRequest) => Reply;
  /** Requests currently left hanging. */
  hanging(): number;
  /** Answers every hanging request with this status. */
  releaseHanging(status: number): void;
  /** Event ids answered 2xx, in the order of the answers. */
  delivered(): string[];
  close(): Promise<void>;
}

/** A local webhook endpoint on 127.0.0.1 that records everything it gets. */
export async function startReceiver(
  reply: (request: ReceivedRequest) => Reply = () => 200,
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const held = new Map<ReceivedRequest, ServerResponse>();
  let line = 0;

  const answer = (request: ReceivedRequest, res: ServerResponse, status: number) => {
    request.answeredWith = status;
    request.answeredAt = line++;
    res.writeHead(status, { "Content-Type": "text/plain" }).end("ok");
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      let eventId = "";
      try {
        eventId = String((JSON.parse(rawBody) as { id?: unknown }).id ?? "");
      } catch {
        eventId = "";
      }
      const request: ReceivedRequest = {
        index: requests.length,
        arrivedAt: line++,
        eventId,
        rawBody,
        signature: header(req, "x-grid-signature"),
        legacySignature: header(req, "x-service-signature"),
        contentType: header(req, "content-type"),
      };
      requests.push(request);
      const decision = receiver.reply(request);
      if (decision === "reset") {
        req.socket.destroy();
        return;
      }
      if (decision === "hang") {
        held.set(request, res);
        res.on("close", () => held.delete(request));
        return;
      }
      answer(request, res, decision);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/webhooks`,
    requests,
    reply,
    hanging: () => held.size,
    releaseHanging(status) {
      for (const [request, res] of [...held]) {
        held.delete(request);
        if (!res.writableEnded && !res.destroyed) answer(request, res, status);
      }
    },
    delivered: () =>
      requests
        .filter(
          (r) => r.answeredWith !== undefined && r.answeredWith >= 200 && r.answeredWith < 300,
        )
        .sort((a, b) => a.answeredAt! - b.answeredAt!)
        .map((r) => r.eventId),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return receiver;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Polls until `check` returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * An event the dispatcher delivers, made through the API alone (so it works
 * against a server in another process): a new customer's KYC event. Returns
 * the event's id.
 */
export async function emitThroughApi(client: SandboxClient): Promise<string> {
  const { data: customer, error } = await client.POST("/customers", {
    body: { customerType: "INDIVIDUAL", fullName: "Hook Target", email: "hook@example.com" },
  });
  if (!customer?.id) throw new Error(`customer not created: ${JSON.stringify(error)}`);
  const { data: events } = await client.GET("/sandbox/webhooks/events", {
    params: { query: { objectId: customer.id } },
  });
  const id = events?.data[0]?.id;
  if (!id) throw new Error(`no event for ${customer.id}`);
  return id;
}
