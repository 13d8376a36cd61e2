import { describe, expect, it } from "vitest";
import { keptBy } from "./kept.js";

describe("keptBy", () => {
  it("keeps a value from the second time its id is asked for", () => {
    const memo = keptBy<{ n: number }>(4);
    let made = 0;
    const make = () => ({ n: ++made });
    const first = memo("a", make);
    const second = memo("a", make);
    expect(made).toBe(2);
    expect(second).not.toBe(first);
    // From here on, the kept value, made no more.
    expect(memo("a", make)).toBe(second);
    expect(memo("a", make)).toBe(second);
    expect(made).toBe(2);
  });

  it("keeps a value from its first use with keepFirst", () => {
    const memo = keptBy<{ n: number }>(4, { keepFirst: true });
    let made = 0;
    const first = memo("a", () => ({ n: ++made }));
    expect(memo("a", () => ({ n: ++made }))).toBe(first);
    expect(made).toBe(1);
  });

  it("keeps at most `limit` values and forgets the oldest first", () => {
    const memo = keptBy<string>(2);
    const makes: string[] = [];
    const get = (id: string) =>
      memo(id, () => {
        makes.push(id);
        return `value of ${id}`;
      });
    for (const id of ["a", "a", "b", "b", "c", "c"]) get(id);
    makes.length = 0;
    // Kept: b and c; a, the oldest, was forgotten when c was kept.
    expect([get("b"), get("c")]).toEqual(["value of b", "value of c"]);
    expect(makes).toEqual([]);
    expect(get("a")).toBe("value of a");
    expect(makes).toEqual(["a"]);
  });

  it("keeps nothing when make throws", () => {
    const memo = keptBy<number>(4);
    let calls = 0;
    const failing = () => {
      calls++;
      throw new Error("no value");
    };
    for (let i = 0; i < 3; i++) expect(() => memo("x", failing)).toThrow("no value");
    expect(calls).toBe(3);
    expect(memo("x", () => 7)).toBe(7);
  });
});
