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
  private waiting: {
    key: K;
    settle: (row: V | undefined) => void;
    fail: (err: unknown) => void;
  }[] = [];

  constructor(
    private readonly id: (key: K) => string,
    private readonly load: (keys: readonly K[]) => Promise<ReadonlyMap<string, V>>,
    private readonly max = 64,
  ) {}

  read(key: K): Promise<V | undefined> {
    return new Promise((settle, fail) => {
      if (this.waiting.push({ key, settle, fail }) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const waiting = this.waiting;
    this.waiting = [];
    const distinct = new Map<string, K>();
    for (const { key } of waiting) distinct.set(this.id(key), key);
    const ids = [...distinct.keys()];
    for (let start = 0; start < ids.length; start += this.max) {
      const part = new Set(ids.slice(start, start + this.max));
      const callers = waiting.filter((w) => part.has(this.id(w.key)));
      this.load([...part].map((id) => distinct.get(id)!)).then(
        (rows) => {
          for (const caller of callers) caller.settle(rows.get(this.id(caller.key)));
        },
        (err: unknown) => {
          for (const caller of callers) caller.fail(err);
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
