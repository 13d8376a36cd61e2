import { once } from "node:events";
import { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { describe, expect, it } from "vitest";
import { expressServer } from "./express-server.js";

describe("expressServer", () => {
  it("hands Express requests and responses that already have the app's prototypes", async () => {
    const app = express();
    app.post("/echo/:name", express.json(), (req, res) => {
      res.status(201).json({ name: req.params.name, body: req.body as unknown, q: req.query.q });
    });
    const server = expressServer(app);
    // Before the app: what Node made, which Express would otherwise re-prototype.
    const arrived: boolean[] = [];
    server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
      arrived.push(
        Object.getPrototypeOf(req) === app.request &&
          Object.getPrototypeOf(res) === app.response &&
          req instanceof IncomingMessage &&
          res instanceof ServerResponse,
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as AddressInfo;
      for (const n of [1, 2]) {
        const answer = await fetch(`http://127.0.0.1:${port}/echo/n${n}?q=${n}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ n }),
        });
        expect(answer.status).toBe(201);
        expect(await answer.json()).toEqual({ name: `n${n}`, body: { n }, q: String(n) });
      }
      expect(arrived).toEqual([true, true]);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
});
