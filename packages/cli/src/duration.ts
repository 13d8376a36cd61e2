// `clock advance` takes a duration as people write it: "90", "90s", "6m",
// "1h30m", "2d". A bare number is seconds, as in POST /sandbox/clock/advance.

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds in a duration such as "45s", "6m", "1h30m" or "2d"; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (!/^(\d+[smhd])+$/.test(trimmed)) return undefined;
  let seconds = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)([smhd])/g)) {
    seconds += Number(amount) * UNIT_SECONDS[unit!]!;
  }
  return seconds;
}
