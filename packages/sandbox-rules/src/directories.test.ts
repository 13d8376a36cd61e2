import { describe, expect, it } from "vitest";
import {
  SANDBOX_INSTITUTIONS,
  SANDBOX_UMA_PROVIDERS,
  SANDBOX_VASPS,
  institutionsFor,
} from "./directories.js";

describe("the sandbox's directories", () => {
  it("name only fictitious institutions, each once", () => {
    const names = SANDBOX_INSTITUTIONS.map((i) => i.bankName);
    expect(names.every((n) => n.startsWith("SANDBOX_"))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    for (const i of SANDBOX_INSTITUTIONS) {
      expect(i.country).toMatch(/^[A-Z]{2}$/);
      expect(i.currency).toMatch(/^[A-Z]{3}$/);
    }
  });

  it("filter institutions by country and currency, in any case", () => {
    expect(institutionsFor({ country: "mx" }).map((i) => i.bankName)).toEqual([
      "SANDBOX_BANCO_MX",
      "SANDBOX_SPEI_MX",
    ]);
    expect(institutionsFor({ currency: "eur" }).map((i) => i.country)).toEqual(["DE", "FR"]);
    expect(institutionsFor({ country: "DE", currency: "USD" })).toEqual([]);
    expect(institutionsFor({})).toHaveLength(SANDBOX_INSTITUTIONS.length);
  });

  it("list UMA providers with 20-character LEIs, in the order they joined", () => {
    for (const p of SANDBOX_UMA_PROVIDERS) expect(p.lei).toMatch(/^[A-Z0-9]{20}$/);
    const joined = SANDBOX_UMA_PROVIDERS.map((p) => p.listedAt);
    expect([...joined].sort()).toEqual(joined);
    expect(SANDBOX_UMA_PROVIDERS.filter((p) => !p.allowListed)).toHaveLength(1);
  });

  it("list VASPs in name order", () => {
    const names = SANDBOX_VASPS.map((v) => v.vaspName);
    expect([...names].sort()).toEqual(names);
  });
});
