// The partner suite's webhook endpoint (partner-suite.mjs): a local receiver
// registered as the platform's webhook endpoint, which verifies and files
// each delivery so the suite can wait for the events its calls announced.
import { createServer } from "node:http";
import { verifyWebhook } from "@payments-sandbox/client";

/**
 * The names an event (its `type` and `data`) is filed under: "TYPE id" of
 * the object it is about, and of the account a payment credits (the answer
 * to a funding is the account, so the account is what the partner holds).
 */
export function keysOf({ type, data }) {
  const ids = [data?.id, data?.destination?.accountId].filter(Boolean);
  return ids.map((id) => `${type} ${id}`);
}

/**
 * A webhook endpoint on 127.0.0.1, as a partner writes one: it verifies each
 * delivery's signature over the raw body before answering 2xx, and keeps
 * each event once (by id) under its keysOf. `arrived` waits for a multiset
 * of those, for at most `timeoutMs`.
 */
export async function startReceiver(publicKeyPem, timeoutMs) {
  const arrivals = new Map();
  const ids = new Set();
  let badSignatures = 0;
  let wake = () => undefined;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      if (!verifyWebhook(raw, req.headers, publicKeyPem)) {
        badSignatures++;
        res.writeHead(400).end();
        return;
      }
      res.writeHead(204).end();
      const event = JSON.parse(raw.toString("utf8"));
      if (ids.has(event.id)) return;
      ids.add(event.id);
      const at = performance.now();
      for (const key of keysOf(event)) {
        if (!arrivals.has(key)) arrivals.set(key, []);
        arrivals.get(key).push(at);
      }
      wake();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks`,
    ids,
    badSignatures: () => badSignatures,
    /** Resolves once every expected event (key → count) has arrived. */
    async arrived(expected) {
      const deadline = performance.now() + timeoutMs;
      const missing = () =>
        [...expected].filter(([key, n]) => (arrivals.get(key)?.length ?? 0) < n);
      while (missing().length > 0) {
        const left = deadline - performance.now();
        if (left <= 0) {
          throw new Error(
            `webhooks not received: ${missing()
              .map(([key]) => key)
              .join(", ")}`,
          );
        }
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
    /** When the `n`th event filed under `key` arrived (performance.now()). */
    arrivedAt: (key, n) => arrivals.get(key)?.[n - 1],
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}
