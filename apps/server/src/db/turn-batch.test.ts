import { describe, expect, it } from "vitest";
import { padded, TurnBatch } from "./turn-batch.js";

/** A batch over a fixed table that records the keys of each load. */
function recorded(table: Record<string, number>, max?: number) {
  const loads: string[][] = [];
  const batch = new TurnBatch<string, number>(
    String,
    async (keys) => {
      loads.push([...keys]);
      return new Map(keys.flatMap((key) => (key in table ? [[key, table[key]!] as const] : [])));
    },
    max,
  );
  return { batch, loads };
}

describe("TurnBatch", () => {
  it("makes the reads of one turn as one load of their distinct keys, and gives each caller its row", async () => {
    const { batch, loads } = recorded({ a: 1, b: 2 });
    const answers = await Promise.all([
      batch.read("a"),
      batch.read("b"),
      batch.read("a"),
      batch.read("missing"),
    ]);
    expect(answers).toEqual([1, 2, 1, undefined]);
    expect(loads).toEqual([["a", "b", "missing"]]);
  });

  it("makes a later turn's reads in a load of their own", async () => {
    const { batch, loads } = recorded({ a: 1, b: 2 });
    expect(await batch.read("a")).toBe(1);
    expect(await batch.read("b")).toBe(2);
    expect(loads).toEqual([["a"], ["b"]]);
  });

  it("splits a turn's keys into loads of at most max", async () => {
    const table = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, i]));
    const { batch, loads } = recorded(table, 2);
    const answers = await Promise.all(Object.keys(table).map((key) => batch.read(key)));
    expect(answers).toEqual([0, 1, 2, 3, 4]);
    expect(loads).toEqual([["k0", "k1"], ["k2", "k3"], ["k4"]]);
  });

  it("fails every caller of a load that fails, and no other", async () => {
    const batch = new TurnBatch<string, number>(
      String,
      async (keys) => {
        if (keys.includes("bad")) throw new Error("connection lost");
        return new Map(keys.map((key) => [key, 1]));
      },
      1,
    );
    const [bad, good] = await Promise.allSettled([batch.read("bad"), batch.read("good")]);
    expect(bad).toMatchObject({ status: "rejected", reason: new Error("connection lost") });
    expect(good).toEqual({ status: "fulfilled", value: 1 });
  });
});

describe("padded", () => {
  it("pads to the next power of two with the last key, keeping the keys in order", () => {
    expect(padded(["a"])).toEqual(["a"]);
    expect(padded(["a", "b"])).toEqual(["a", "b"]);
    expect(padded(["a", "b", "c"])).toEqual(["a", "b", "c", "c"]);
    expect(padded(["a", "b", "c", "d", "e"])).toEqual(["a", "b", "c", "d", "e", "e", "e", "e"]);
  });
});
