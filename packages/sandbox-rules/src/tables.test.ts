import { describe, expect, it } from "vitest";
import { evaluate } from "./evaluate.js";
import { MAGIC_TABLES } from "./tables.js";

// What every table must satisfy; each area's rows are tested beside it, in tables/*.test.ts.
describe("every table", () => {
  it("has a distinct id", () => {
    expect(new Set(MAGIC_TABLES.map((t) => t.id)).size).toBe(MAGIC_TABLES.length);
  });

  it.each(MAGIC_TABLES.map((t) => [t.id, t] as const))(
    "%s has distinct, reachable rows",
    (_id, table) => {
      const matches = table.rows.map((r) => r.match);
      expect(new Set(matches).size).toBe(matches.length);
      for (const row of table.rows) {
        // An input that ends in the row's key; a row the table's own reader cannot produce is dead.
        const input =
          table.key.kind === "umaLocalPart"
            ? `${row.match}@sandbox.uma.money`
            : table.key.kind === "exact"
              ? row.match
              : `X-${row.match}`;
        expect(evaluate(table, input)).toEqual({
          outcome: row.outcome,
          matched: row.match,
          row,
          key: row.match,
        });
        expect(row.description.trim()).not.toBe("");
      }
    },
  );

  it("uses the default row when no key can be read", () => {
    for (const table of MAGIC_TABLES) {
      expect(evaluate(table, undefined)).toEqual({
        outcome: table.other.outcome,
        matched: null,
        row: table.other,
        key: null,
      });
    }
  });
});
