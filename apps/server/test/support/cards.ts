// Steps the card tests share: moving the sandbox clock, and a cardholder with
// an account to fund a card. Each describe.each block starts its own sandbox,
// so the steps read it through a getter rather than holding one.
import { newAccount, newCustomer } from "../card-fixtures.js";
import type { TestSandbox } from "../harness.js";

/** Moves the platform's sandbox clock on, running what fell due. */
export async function advance(sandbox: TestSandbox, seconds: number) {
  const { data } = await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds } });
  return data!;
}

export function cardSteps(current: () => TestSandbox) {
  /** A cardholder, and an account of theirs that can fund a card. */
  async function holderWithAccount() {
    const customerId = await newCustomer(current());
    const accountId = await newAccount(current(), customerId);
    return { customerId, accountId };
  }

  return { holderWithAccount };
}
