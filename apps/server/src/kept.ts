/**
 * A get-or-make memo for values derived from keys that recur (the platform's
 * keys, a session's key, a point already checked, a prepared statement): at
 * most `limit` are kept, then all are forgotten at once. A `make` that
 * throws keeps nothing.
 */
export function keptBy<V>(limit: number): (id: string, make: () => V) => V {
  const kept = new Map<string, V>();
  return (id, make) => {
    let value = kept.get(id);
    if (value === undefined) {
      value = make();
      if (kept.size >= limit) kept.clear();
      kept.set(id, value);
    }
    return value;
  };
}
