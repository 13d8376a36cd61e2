import { ApiError } from "../../errors.js";

/**
 * The largest amount or balance the API carries: openapi.yaml's `Amount`
 * maximum, 2^53 - 1, the largest integer a JSON number holds exactly in
 * every client. The database could store more; a value above this would
 * make every later read of the record fail its response schema, so no write
 * may leave one behind.
 */
export const MAX_AMOUNT = 9_007_199_254_740_991n;

/** MAX_AMOUNT as the number the API writes it, for limits it answers. */
export const MAX_AMOUNT_NUMBER = Number(MAX_AMOUNT);

/** Whether `value` is an amount the API can carry (0 to MAX_AMOUNT). */
export const inAmountRange = (value: bigint): boolean => value >= 0n && value <= MAX_AMOUNT;

/** The refusal of a write whose result would leave an amount or balance out of range. */
export function amountOutOfRange(message: string, details: Record<string, unknown> = {}) {
  return new ApiError(400, "AMOUNT_OUT_OF_RANGE", message, {
    details: { ...details, maximum: Number(MAX_AMOUNT) },
  });
}
