/**
 * A get-or-make memo for values derived from keys that recur (the platform's
 * keys, a session's key, a point already checked, a prepared statement). A
 * value is kept from the second time its id is asked for (from the first
 * with `keepFirst`, for ids that are nearly always asked for again), and at
 * most `limit` are kept, the oldest forgotten first. A `make` that throws
 * keeps nothing.
 *
 * Why not keep every value, and forget them all when full: most keys the
 * server sees are used once (each OTP login's target key signs one
 * request), so the caches filled with them, and forgetting thousands of
 * OpenSSL keys at once made one garbage collection of the crypto thread take
 * 54 ms under load (bench/RESULTS.md). A value made for one use now dies
 * young, with the rest of its request.
 */
export function keptBy<V>(
  limit: number,
  { keepFirst = false }: { keepFirst?: boolean } = {},
): (id: string, make: () => V) => V {
  const kept = new Map<string, V>();
  // Ids asked for once, not yet kept: strings, cheap to forget all at once.
  const seenOnce = new Set<string>();
  return (id, make) => {
    const found = kept.get(id);
    if (found !== undefined) return found;
    const value = make();
    if (!keepFirst && !seenOnce.delete(id)) {
      if (seenOnce.size >= limit) seenOnce.clear();
      seenOnce.add(id);
      return value;
    }
    if (kept.size >= limit) kept.delete(kept.keys().next().value as string);
    kept.set(id, value);
    return value;
  };
}
