import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isForbiddenAddress } from "./forbidden-addresses.js";

// One webhook request, on node:http with keep-alive connections. The
// dispatcher sends one request per event beside the API's own load, and
// fetch cost five times the CPU per request here (722 µs with a timeout
// signal combined with the stop signal, against 135 µs: bench/RESULTS.md).

export type PostResult =
  | {
      kind: "response";
      httpStatus: number;
      /** When asked for: the start of the body. */ body?: string;
    }
  | { kind: "error"; error: string }
  | { kind: "interrupted"; error: string };

const MAX_ERROR_LENGTH = 500;
/** How much of a response body is kept when it is asked for (bytes). */
const MAX_BODY_BYTES = 1024;

/**
 * Resolves a receiver's host name, refusing link-local addresses: a name
 * can point there even though the endpoint's URL, checked when it was set,
 * does not name such an address itself.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options, (err, address, family) => {
    if (err) {
      callback(err, address, family);
      return;
    }
    const addresses = typeof address === "string" ? [{ address }] : address;
    const refused = addresses.find((a) => isForbiddenAddress(a.address));
    if (refused === undefined) {
      callback(null, address, family);
      return;
    }
    const error = Object.assign(
      new Error(`${hostname} resolves to ${refused.address}, a link-local address`),
      { code: "EADDRNOTALLOWED" },
    );
    callback(error, address, family);
  });
};

export class WebhookPoster {
  private readonly agents = {
    "http:": new http.Agent({ keepAlive: true }),
    "https:": new https.Agent({ keepAlive: true }),
  };

  /** What interrupts each request in flight. */
  private readonly inFlight = new Set<() => void>();
  private stopping = false;

  constructor(private readonly timeoutMs: number) {}

  /**
   * POSTs `body`; the answer is the response's status. A redirect is the
   * receiver's answer, not a place to send the event (it is not followed);
   * the response body is read, so the connection can be reused, and dropped
   * unless `keepBody` (then its first KiB is answered).
   */
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    keepBody = false,
  ): Promise<PostResult> {
    const { timeoutMs } = this;
    return new Promise((resolve) => {
      if (this.stopping) {
        resolve({ kind: "interrupted", error: "interrupted: the server was stopping" });
        return;
      }
      let settled = false;
      const settle = (result: PostResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      const target = new URL(url);
      const client = target.protocol === "https:" ? https : http;
      const request = client.request(target, {
        method: "POST",
        agent: this.agents[target.protocol === "https:" ? "https:" : "http:"],
        lookup: guardedLookup,
        headers: { ...headers, "Content-Length": Buffer.byteLength(body) },
      });
      // Until the whole response is in: a receiver that answers and then
      // never ends its body does not keep the connection either.
      const timer = setTimeout(() => {
        settle({ kind: "error", error: `timed out after ${timeoutMs} ms` });
        request.destroy();
      }, timeoutMs);
      const onStop = () => {
        settle({ kind: "interrupted", error: "interrupted: the server was stopping" });
        request.destroy();
      };
      this.inFlight.add(onStop);
      // After the response's end, or an error: the request is over.
      request.on("close", () => {
        clearTimeout(timer);
        this.inFlight.delete(onStop);
      });
      request.on("response", (response) => {
        const httpStatus = response.statusCode ?? 0;
        // An error after the answer (the body cut short) changes nothing.
        response.on("error", () => undefined);
        if (!keepBody) {
          settle({ kind: "response", httpStatus });
          response.resume();
          return;
        }
        const kept: Buffer[] = [];
        let keptBytes = 0;
        response.on("data", (chunk: Buffer) => {
          if (keptBytes >= MAX_BODY_BYTES) return;
          const part = chunk.subarray(0, MAX_BODY_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        });
        response.on("end", () =>
          settle({ kind: "response", httpStatus, body: startOfText(Buffer.concat(kept)) }),
        );
      });
      request.on("error", (err) => settle({ kind: "error", error: describeError(err) }));
      request.end(body);
    });
  }

  /** The server is stopping: ends every request in flight ("interrupted") and refuses new ones. */
  interrupt(): void {
    this.stopping = true;
    for (const stop of [...this.inFlight]) stop();
  }

  /** Closes the idle keep-alive connections. */
  close(): void {
    for (const agent of Object.values(this.agents)) agent.destroy();
  }
}

/** UTF-8 text of `bytes`, without a character the cut at MAX_BODY_BYTES split. */
function startOfText(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return bytes.length === MAX_BODY_BYTES ? text.replace(/\ufffd$/u, "") : text;
}

function describeError(err: unknown): string {
  const code =
    typeof err === "object" && err !== null && "code" in err
      ? String((err as { code: unknown }).code)
      : undefined;
  const message = err instanceof Error ? err.message : String(err);
  const text = code && !message.includes(code) ? `${code}: ${message}` : message;
  return text.slice(0, MAX_ERROR_LENGTH);
}
