import { afterEach } from "vitest";
import { runningSandboxes } from "./harness.js";
import { expectLedgersBalanced } from "./money-helpers.js";

// After every test, in every file: each running sandbox's accounts equal
// their ledgers (money-helpers.ts). A test that moved money wrongly fails
// here even when its own assertions passed.
afterEach(async () => {
  for (const sandbox of runningSandboxes()) await expectLedgersBalanced(sandbox.server.data);
});
