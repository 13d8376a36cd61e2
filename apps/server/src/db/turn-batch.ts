interface Caller<V> {
  settle: (row: V | undefined) => void;
  fail: (err: unknown) => void;
}

/**
 * Reads of one kind, by key, asked for during one turn of the event loop and
 * made together when the turn's I/O callbacks are done: one statement for
 * the turn instead of one each. Under load the server parses many requests
 * in one turn, and on PostgreSQL most of a small read's cost, on both
 * sides, is its round trip rather than the read. Every read still reaches
 * the database, so nothing is served from memory.
 *
 * `load` gets the distinct keys (at most `max`) and returns the rows found,
 * by the key's `id`; a key it does not return reads as undefined. Its
 * failure is its callers' failure.
 */
export class TurnBatch<K, V> {
  /** This turn's keys by id, each with the callers waiting for its row. */
  private waiting = new Map<string, { key: K; callers: Caller<V>[] }>();

  constructor(
    private readonly id: (key: K) => string,
    private readonly load: (keys: readonly K[]) => Promise<ReadonlyMap<string, V>>,
    private readonly max = 64,
  ) {}

  read(key: K): Promise<V | undefined> {
    return new Promise((settle, fail) => {
      if (this.waiting.size === 0) setImmediate(() => this.flush());
      const id = this.id(key);
      const entry = this.waiting.get(id);
      if (entry) entry.callers.push({ settle, fail });
      else this.waiting.set(id, { key, callers: [{ settle, fail }] });
    });
  }

  private flush(): void {
    const entries = [...this.waiting];
    this.waiting = new Map();
    for (let start = 0; start < entries.length; start += this.max) {
      const part = entries.slice(start, start + this.max);
      this.load(part.map(([, { key }]) => key)).then(
        (rows) => {
          for (const [id, { callers }] of part) for (const c of callers) c.settle(rows.get(id));
        },
        (err: unknown) => {
          for (const [, { callers }] of part) for (const c of callers) c.fail(err);
        },
      );
    }
  }
}

/**
 * `keys` padded to the next power of two with copies of its last key, so a
 * read of many keys has a handful of statement texts (each prepared once)
 * rather than one for every count.
 */
export function padded<K>(keys: readonly K[]): K[] {
  let size = 1;
  while (size < keys.length) size *= 2;
  const out = [...keys];
  while (out.length < size) out.push(keys[keys.length - 1]!);
  return out;
}
