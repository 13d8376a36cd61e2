/** The bodies of the two operations: money comes from `source` and goes to `destination`. */
export const pull = (accountId: string, bankId: string, amount?: number) => ({
  source: { accountId: bankId },
  destination: { accountId },
  ...(amount !== undefined ? { amount } : {}),
});
export const push = (accountId: string, bankId: string, amount?: number) => ({
  source: { accountId },
  destination: { accountId: bankId },
  ...(amount !== undefined ? { amount } : {}),
});
