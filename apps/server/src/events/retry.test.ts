import { describe, expect, it } from "vitest";
import { loadWebhookConfig } from "../config.js";
import { retryDelayMs, retryWindowOver } from "./retry.js";

const config = { retryBaseMs: 1_000, retryMaxDelayMs: 3_600_000 };

describe("retryDelayMs", () => {
  it("doubles per failure, between half and all of the nominal delay", () => {
    for (let failures = 1; failures <= 8; failures++) {
      const nominal = 1_000 * 2 ** (failures - 1);
      expect(retryDelayMs(failures, config, () => 0)).toBe(nominal / 2);
      expect(retryDelayMs(failures, config, () => 1)).toBe(nominal);
    }
  });

  it("never exceeds the maximum delay, however many failures", () => {
    expect(retryDelayMs(13, config, () => 1)).toBe(3_600_000);
    expect(retryDelayMs(1_000, config, () => 1)).toBe(3_600_000);
  });

  it("keeps retrying for a whole day with the defaults before the window closes", () => {
    const defaults = loadWebhookConfig({});
    let elapsed = 0;
    let attempts = 1;
    const first = new Date(0);
    while (!retryWindowOver(first, new Date(elapsed), defaults.maxAgeMs)) {
      elapsed += retryDelayMs(attempts++, defaults, () => 1);
    }
    expect(elapsed).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(attempts).toBeGreaterThan(20);
  });
});

describe("loadWebhookConfig", () => {
  it("has production-like defaults", () => {
    expect(loadWebhookConfig({})).toEqual({
      timeoutMs: 10_000,
      retryBaseMs: 1_000,
      retryMaxDelayMs: 3_600_000,
      maxAgeMs: 24 * 3_600_000,
      pollMs: 200,
      // The README's defaults: 1024 in flight per process, an eighth per platform.
      concurrency: 1024,
      platformConcurrency: 128,
      leaseMs: 40_000,
    });
  });

  it("reads fractional hours and rejects nonsense", () => {
    expect(loadWebhookConfig({ WEBHOOK_MAX_AGE_HOURS: "0.5" }).maxAgeMs).toBe(1_800_000);
    expect(() => loadWebhookConfig({ WEBHOOK_TIMEOUT_MS: "0" })).toThrow(/WEBHOOK_TIMEOUT_MS/);
    expect(() => loadWebhookConfig({ WEBHOOK_POLL_MS: "fast" })).toThrow(/WEBHOOK_POLL_MS/);
    expect(() =>
      loadWebhookConfig({ WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_LEASE_MS: "5000" }),
    ).toThrow(/WEBHOOK_LEASE_MS/);
  });
});
