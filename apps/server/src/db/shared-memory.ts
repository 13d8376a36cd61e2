// Memory that the threads of this process share, by name: a module that
// keeps a process-wide value (e.g. the event sequence, events/outbox.ts)
// takes its slot when it loads. The SQLite writer thread is handed every
// slot taken so far when it starts (and any taken later with its next call,
// sql-runner.ts), and adopts them before it loads a module that takes one.
// So db/ knows of no particular slot.

const slots = new Map<string, SharedArrayBuffer>();

/**
 * The memory named `name`, of `bytes` bytes: the same in every thread of the
 * process. Take it when the module that owns it loads, so that a thread
 * started after that shares it.
 */
export function sharedMemory(name: string, bytes: number): SharedArrayBuffer {
  let memory = slots.get(name);
  if (memory === undefined) slots.set(name, (memory = new SharedArrayBuffer(bytes)));
  if (memory.byteLength !== bytes) {
    throw new Error(`shared memory ${name} has ${memory.byteLength} bytes, not ${bytes}`);
  }
  return memory;
}

/** Every slot taken so far, as a thread being started is given them. */
export function sharedMemorySlots(): Record<string, SharedArrayBuffer> {
  return Object.fromEntries(slots);
}

/**
 * In a thread: the slots of the thread that started it, adopted before any
 * module of this thread takes its own. A slot this thread already has is
 * that same memory, adopted before.
 */
export function adoptSharedMemory(given: Readonly<Record<string, SharedArrayBuffer>>): void {
  for (const [name, memory] of Object.entries(given)) {
    if (!slots.has(name)) slots.set(name, memory);
  }
}

/** How many slots have been taken: a thread started with fewer needs the others. */
export function sharedMemoryCount(): number {
  return slots.size;
}
