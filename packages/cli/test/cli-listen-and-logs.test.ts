import { describe, expect, it } from "vitest";
import { verifyWebhook, type Schemas } from "@payments-sandbox/client";
import { cli, createTestPlatform, startCli, startForwardTarget, waitFor } from "./support.js";
import { eventsAbout, json, onePlatformPerTest, platform, sandbox } from "./platform-per-test.js";

type EventRecord = Schemas["WebhookEventRecord"];

// What the CLI shows of a platform's traffic, against a live sandbox: listen
// (webhooks received, verified and forwarded), events (listed and replayed)
// and logs tail (API requests as they happen).

onePlatformPerTest();

describe("listen and events", () => {
  it("receives, verifies and forwards every webhook, replays one, and shows the delivery log", async () => {
    const target = await startForwardTarget();
    const listener = startCli(["listen", "--forward-to", target.url, "--json"], platform.env);
    try {
      await waitFor("listen to be ready", () => listener.stdout().includes('"listening"'));
      const ready = JSON.parse(listener.stdout().split("\n")[0]!) as { listening: string };
      expect((await platform.client.GET("/config")).data?.webhookEndpoint).toBe(ready.listening);

      const done = await json<{ customerId: string }>(["trigger", "kyc"]);
      await waitFor("both KYC events forwarded", () => target.received.length >= 2);
      // Forwarded unchanged: the platform's key verifies what the target got.
      for (const webhook of target.received) {
        expect(
          verifyWebhook(webhook.body, webhook.signature, platform.created.webhookPublicKey),
        ).toBe(true);
        // Under both names, as the sandbox sends them.
        expect(webhook.legacySignature).toBe(webhook.signature);
      }
      const forwarded = target.received.map(
        (w) => JSON.parse(w.body) as { id: string; type: string },
      );
      expect(forwarded.map((e) => e.type)).toEqual([
        "CUSTOMER.KYC_PENDING",
        "CUSTOMER.KYC_APPROVED",
      ]);

      // A delivery with a bad signature is refused and not forwarded, under
      // either name; X-Grid-Signature is read first.
      const forgeries: Record<string, string>[] = [
        { "X-Grid-Signature": "forged" },
        { "X-Service-Signature": "forged" },
        { "X-Grid-Signature": "forged", "X-Service-Signature": target.received[0]!.signature! },
      ];
      for (const headers of forgeries) {
        const forged = await fetch(ready.listening, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: target.received[0]!.body,
        });
        expect(forged.status).toBe(400);
      }
      // A receiver that sends only the old name is still verified (and forwarded).
      const legacyOnly = await fetch(ready.listening, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Service-Signature": target.received[0]!.signature!,
        },
        body: target.received[0]!.body,
      });
      expect(legacyOnly.status).toBe(200);
      await waitFor("the old-name delivery forwarded", () => target.received.length === 3);

      // events list shows both, and replay sends the first again.
      const listed = await eventsAbout(done.customerId);
      expect(listed.map((e) => e.id).sort()).toEqual(forwarded.map((e) => e.id).sort());
      const first = forwarded[0]!.id;
      const replayed = await cli(["events", "replay", first], platform.env);
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(replayed.stdout).toContain(`Queued ${first}`);
      await waitFor("the replay forwarded", () => target.received.length === 4);
      expect((JSON.parse(target.received[3]!.body) as { id: string }).id).toBe(first);
      await waitFor("the replay's attempt recorded", async () => {
        const event = (await eventsAbout(done.customerId)).find((e) => e.id === first);
        return event?.attempts.length === 2;
      });
      const human = await cli(["events", "list", "--object-id", done.customerId], platform.env);
      expect(human.stdout).toContain(`${first}  CUSTOMER.KYC_PENDING`);
      expect(human.stdout.match(/attempt .* → 200/g)).toHaveLength(3);

      listener.child.kill("SIGINT");
      const exited = await listener.exited;
      expect(exited.code, exited.stderr).toBe(0);
      const lines = exited.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const deliveries = lines.flatMap((l) =>
        l.delivery
          ? [l.delivery as { eventId: string; verified: boolean; forwardStatus?: number }]
          : [],
      );
      expect(deliveries.map((d) => [d.eventId, d.verified, d.forwardStatus ?? null])).toEqual([
        [forwarded[0]!.id, true, 200],
        [forwarded[1]!.id, true, 200],
        [forwarded[0]!.id, false, null],
        [forwarded[0]!.id, false, null],
        [forwarded[0]!.id, false, null],
        [forwarded[0]!.id, true, 200],
        [first, true, 200],
      ]);
      const log = lines.at(-1)!.deliveryLog as EventRecord[];
      expect(log.find((e) => e.id === first)?.attempts).toHaveLength(2);
      // The endpoint is put back as it was: none.
      expect((await platform.client.GET("/config")).data).not.toHaveProperty("webhookEndpoint");
    } finally {
      if (listener.child.exitCode === null) listener.child.kill("SIGKILL");
      await target.close();
    }
  });

  it("forwards to a URL typed without http://, and prints the network error of a failed forward", async () => {
    const target = await startForwardTarget();
    const withoutScheme = target.url.replace(/^http:\/\//, "");
    // A port nothing listens on: the target's, once it is closed.
    const closed = await startForwardTarget();
    await closed.close();
    const refusedUrl = closed.url.replace(/^http:\/\//, "");
    const good = startCli(["listen", "--forward-to", withoutScheme], platform.env);
    try {
      await waitFor("listen to be ready", () => good.stdout().includes("Ready."));
      expect(good.stdout()).toContain(`forwarded to ${target.url}`);
      await json(["trigger", "kyc"]);
      await waitFor("both KYC events forwarded", () => target.received.length >= 2);
    } finally {
      good.child.kill("SIGINT");
      await good.exited;
      await target.close();
    }
    const bad = startCli(["listen", "--forward-to", refusedUrl], platform.env);
    try {
      await waitFor("listen to be ready", () => bad.stdout().includes("Ready."));
      await json(["trigger", "kyc"]);
      await waitFor("a failed forward printed", () => bad.stdout().includes("failed:"));
      expect(bad.stdout()).toMatch(/failed: connect ECONNREFUSED 127\.0\.0\.1:\d+/);
      expect(bad.stdout()).not.toContain("fetch failed");
    } finally {
      bad.child.kill("SIGINT");
      await bad.exited;
    }
    const nonsense = await cli(["listen", "--forward-to", "ftp://example.com/x"], platform.env);
    expect(nonsense.code).toBe(2);
    expect(nonsense.stderr).toContain("--forward-to must be an http:// or https:// URL");
  });

  it("replay needs an endpoint, and lists filter by type", async () => {
    const done = await json<{ customerId: string }>(["trigger", "kyc"]);
    const pending = await json<{ data: EventRecord[] }>([
      "events",
      "list",
      "--type",
      "CUSTOMER.KYC_PENDING",
    ]);
    expect(pending.data.map((e) => e.objectId)).toEqual([done.customerId]);
    const replay = await cli(["events", "replay", pending.data[0]!.id], platform.env);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain("WEBHOOK_ENDPOINT_NOT_SET");
  });
});

describe("logs tail", () => {
  it("shows each API request as it happens, filtered, with --json one line per request", async () => {
    const all = startCli(["logs", "tail"], platform.env);
    const refused = startCli(
      ["logs", "tail", "--status", "4xx", "--method", "post", "--path", "/customers", "--json"],
      platform.env,
    );
    const byCode = startCli(
      ["logs", "tail", "--error-code", "INVALID_INPUT", "--json"],
      platform.env,
    );
    try {
      for (const tail of [all, refused, byCode]) {
        await waitFor(
          "the tail to start",
          () => tail.stdout().includes("Tailing") || tail.stderr().includes("Tailing"),
        );
      }
      const api = platform.client;
      const listed = await api.GET("/customers");
      expect(listed.response.status).toBe(200);
      const secret = "4111111111111111";
      const bad = await api.POST("/customers", {
        // A value the contract refuses, carrying something that must never be logged.
        body: { customerType: "NOBODY", fullName: secret } as never,
      });
      expect(bad.response.status).toBe(400);
      const requestId = bad.response.headers.get("X-Trace-Id")!;
      await waitFor("both requests tailed", () => all.stdout().includes(requestId));
      await waitFor("the refusal tailed as JSON", () => refused.stdout().includes(requestId));
      await waitFor("the refusal tailed by code", () => byCode.stdout().includes(requestId));

      const lines = all.stdout().trim().split("\n").slice(-2);
      expect(lines[0]).toMatch(/GET +\/2025-10-13\/customers +200 +[\d.]+ ms +\S+/);
      expect(lines[1]).toContain(`POST   /2025-10-13/customers  400 INVALID_INPUT`);
      expect(lines[1]).toContain(requestId);

      const json = refused
        .stdout()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Schemas["SandboxRequestLogEntry"]);
      expect(json).toHaveLength(1);
      expect(json[0]).toMatchObject({
        method: "POST",
        path: "/2025-10-13/customers",
        status: 400,
        requestId,
        error: { code: "INVALID_INPUT" },
      });
      expect(json[0]!.latencyMs).toBeGreaterThanOrEqual(0);
      for (const tail of [all, refused, byCode]) {
        expect(tail.stdout()).not.toContain(secret);
        expect(tail.stdout()).not.toContain(platform.env.SANDBOX_TOKEN_SECRET!);
      }
    } finally {
      for (const tail of [all, refused, byCode]) tail.child.kill("SIGINT");
      for (const tail of [all, refused, byCode]) expect((await tail.exited).code).toBe(0);
    }
    const badStatus = await cli(["logs", "tail", "--status", "4x"], platform.env);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain('--status "4x" is not a status');
  });

  it("shows only the platform's own requests", async () => {
    const other = await createTestPlatform(sandbox, "other platform");
    try {
      await other.client.GET("/customers");
      const page = await platform.client.GET("/sandbox/logs/requests");
      expect(page.data!.data.filter((e) => e.path === "/2025-10-13/customers")).toEqual([]);
      const theirs = await other.client.GET("/sandbox/logs/requests");
      expect(theirs.data!.data.map((e) => e.path)).toEqual(["/2025-10-13/customers"]);
    } finally {
      await cli(["platforms", "delete", other.created.id], sandbox.rootEnv);
    }
  });
});
