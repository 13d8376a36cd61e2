import { afterAll, afterEach, expect } from "vitest";
import { checkingProductionContract, takeAnswers } from "./harness.js";
import { ProductionContractCheck, describeViolation } from "./support/production-contract.js";

// After every test, in every file: each answer the test's sandboxes gave to
// one of production's operations is one production's contract allows
// (support/production-contract.ts). A test whose own assertions passed on an
// answer production would never give fails here, naming the operation, the
// status and what differs.
const check = checkingProductionContract ? new ProductionContractCheck() : undefined;

afterEach(async () => {
  if (!check) return;
  const violations = [];
  for (const answer of takeAnswers()) violations.push(...(await check.check(answer)));
  expect(
    violations.map(describeViolation),
    "answers that production's contract does not allow",
  ).toEqual([]);
});

afterAll(async () => {
  await check?.close();
});
