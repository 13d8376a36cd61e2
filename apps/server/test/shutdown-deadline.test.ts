import { connect } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { API_BASE_PATH } from "../src/config.js";
import { databases, freshDatabase, type TestDatabase } from "./harness.js";
import {
  AUTH,
  exitWithin,
  killServerProcesses,
  startServerProcess,
} from "./support/shutdown-process.js";

// Stopping the built server while a request cannot finish: the stop gives up
// at its deadline, or at once on a second SIGTERM, and says why.

afterEach(killServerProcesses);

describe.each(databases)("stopping the server process on %s", (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(kind);
  });
  afterAll(async () => {
    await database?.drop();
  });

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
