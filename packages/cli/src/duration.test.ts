import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.js";

describe("parseDuration", () => {
  it.each([
    ["90", 90],
    ["30s", 30],
    ["6m", 360],
    ["1h30m", 5400],
    ["2d", 172_800],
    ["1H", 3600],
  ])("reads %s as %i seconds", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(["", "m", "1.5h", "-3s", "1w", "1h 30m", "soon"])("refuses %j", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
