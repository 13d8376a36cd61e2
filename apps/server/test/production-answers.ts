import { appendFileSync } from "node:fs";
import { afterAll, afterEach, expect } from "vitest";
import { checkingProductionContract, takeAnswers } from "./harness.js";
import { ProductionContractCheck, describeViolation } from "./support/production-contract.js";

// After every test, in every file: each answer the test's sandboxes gave to
// one of production's operations is one production's contract allows
// (support/production-contract.ts). A test whose own assertions passed on an
// answer production would never give fails here, naming the operation, the
// status and what differs. PRODUCTION_CONTRACT_LOG=<file> also appends
// every finding to that file.
const check = checkingProductionContract ? new ProductionContractCheck() : undefined;

afterEach(async () => {
  if (!check) return;
  const violations = [];
  for (const answer of takeAnswers()) violations.push(...(await check.check(answer)));
  // A whole run's findings, one a line, for a survey of every difference at once.
  const log = process.env.PRODUCTION_CONTRACT_LOG;
  if (log && violations.length > 0) {
    const test = expect.getState().testPath?.split("/").pop() ?? "";
    const lines = violations.map((v) => `${test}\t${describeViolation(v)}\n`);
    appendFileSync(log, lines.join(""));
  }
  expect(
    violations.map(describeViolation),
    "answers that production's contract does not allow",
  ).toEqual([]);
});

afterAll(async () => {
  await check?.close();
});
