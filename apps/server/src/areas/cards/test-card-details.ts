import { createHash } from "node:crypto";

// Sandbox cards have no real number. The reveal page shows a test number that
// is stable for a card, passes the Luhn check and ends in the card's last4, so
// an integrator's own card-number handling can be exercised with it.

/** Visa test range: every sandbox PAN starts with these 6 digits. */
export const TEST_PAN_PREFIX = "400000";

function digitsFrom(seed: string, count: number): string {
  const hash = createHash("sha256").update(seed).digest();
  let out = "";
  for (let i = 0; out.length < count; i++) out += String(hash[i % hash.length]! % 10);
  return out;
}

/** The Luhn sum: every second digit from the right doubled (minus 9 above 9). */
function luhnSum(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum;
}

/** Whether `pan` passes the Luhn (mod 10) check. */
export function luhnValid(pan: string): boolean {
  return /^[0-9]{12,19}$/.test(pan) && luhnSum(pan) % 10 === 0;
}

export interface TestCardDetails {
  pan: string;
  cvv: string;
  /** MM/YY */
  expiry: string;
}

export function testCardDetails(card: {
  id: string;
  last4: string;
  expMonth: number;
  expYear: number;
}): TestCardDetails {
  // 6 prefix digits + 5 from the card id + 1 balancing digit + last4 = 16.
  // The balancing digit sits 5th from the right, a position Luhn does not
  // double, so it shifts the sum by exactly its own value.
  const head = TEST_PAN_PREFIX + digitsFrom(`pan:${card.id}`, 5);
  const balance = (10 - (luhnSum(`${head}0${card.last4}`) % 10)) % 10;
  const pan = `${head}${balance}${card.last4}`;
  return {
    pan,
    cvv: digitsFrom(`cvv:${card.id}`, 3),
    expiry: `${String(card.expMonth).padStart(2, "0")}/${String(card.expYear % 100).padStart(2, "0")}`,
  };
}
