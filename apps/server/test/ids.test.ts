import { describe, expect, it } from "vitest";
import { mintedIdReadsAsMagic } from "@payments-sandbox/sandbox-rules";
import { newId } from "../src/ids.js";

describe("newId", () => {
  it("has the spec's Type:<uuid> form", () => {
    expect(newId("Card")).toMatch(
      /^Card:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(newId("Request")).toMatch(/^Request:[0-9a-f-]{36}$/);
  });

  it("never mints an internal account or customer id that a magic table would read", () => {
    // About one random id in 2,000 would: 20,000 draws meet one almost surely.
    for (const type of ["InternalAccount", "Customer"] as const) {
      const magic = Array.from({ length: 20_000 }, () => newId(type)).filter((id) =>
        mintedIdReadsAsMagic(type, id),
      );
      expect(magic).toEqual([]);
    }
  });
});
