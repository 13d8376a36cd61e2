import { Worker } from "node:worker_threads";

/**
 * A worker thread running one of the server's thread modules, given by its
 * URL without extension (e.g. `new URL("./delivery-thread", import.meta.url)`).
 */
export function startThread(module: URL, workerData: unknown): Worker {
  return import.meta.url.endsWith(".ts")
    ? // Under the test runner the modules are TypeScript source: the thread
      // loads its source through tsx's loader.
      new Worker(
        `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(
          `${module.href}.ts`,
        )}); });`,
        { eval: true, workerData },
      )
    : new Worker(new URL(`${module.href}.js`), { workerData });
}
