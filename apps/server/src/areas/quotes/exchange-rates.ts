import type { Schemas } from "@payments-sandbox/client";
import { MAX_AMOUNT_NUMBER } from "../ledger/amount-range.js";

// The sandbox's fixed exchange-rate table. Rates are what one unit of the
// source currency buys of the destination currency, spread included; each
// payment also pays a flat fee in the source currency. Every supported
// currency has 2 decimals, so minor units convert at the same rate as major.

/** Value of one unit of each currency in US dollars, in millionths. */
const USD_VALUE_MICROS: Readonly<Record<string, bigint>> = {
  USD: 1_000_000n,
  EUR: 1_160_000n,
  GBP: 1_340_000n,
  CAD: 720_000n,
  MXN: 54_500n,
  BRL: 185_000n,
  // The embedded wallets' dollar stablecoin.
  USDB: 1_000_000n,
};

/** How each supported currency is named and written; all have 2 decimals. */
const CURRENCY_NAMES: Readonly<Record<string, { name: string; symbol: string }>> = {
  USD: { name: "US Dollar", symbol: "$" },
  EUR: { name: "Euro", symbol: "€" },
  GBP: { name: "Pound Sterling", symbol: "£" },
  CAD: { name: "Canadian Dollar", symbol: "$" },
  MXN: { name: "Mexican Peso", symbol: "$" },
  BRL: { name: "Brazilian Real", symbol: "R$" },
  USDB: { name: "USDB", symbol: "USDB" },
};

/** The Currency object of a supported currency; undefined for others. */
export function currencyInfo(code: string): Schemas["Currency"] | undefined {
  const names = CURRENCY_NAMES[code];
  return names ? { code, ...names, decimals: 2 } : undefined;
}

/** An amount in minor units with its currency, as the API writes balances and amounts. */
export function currencyAmount(amount: bigint | number, code: string): Schemas["CurrencyAmount"] {
  return { amount: Number(amount), currency: currencyInfo(code) ?? { code } };
}

/** Flat fee per payment, in minor units of the source currency. */
const FEE_MINOR_UNITS: Readonly<Record<string, bigint>> = {
  USD: 100n,
  EUR: 100n,
  GBP: 100n,
  CAD: 150n,
  MXN: 2_000n,
  BRL: 500n,
  USDB: 100n,
};

/** The spread taken on a currency conversion, in millionths (0.5 %). */
const SPREAD_MICROS = 5_000n;
const MICRO = 1_000_000n;

/** Rates and fees hold for windows of this length. */
export const RATE_CACHE_SECONDS = 300;

export const SUPPORTED_CURRENCIES = Object.keys(USD_VALUE_MICROS);

export interface Rate {
  sourceCurrency: string;
  destinationCurrency: string;
  /** Destination units per source unit, in millionths. */
  rateMicros: bigint;
  feeAmount: bigint;
}

export function rateFor(sourceCurrency: string, destinationCurrency: string): Rate | undefined {
  const source = USD_VALUE_MICROS[sourceCurrency];
  const destination = USD_VALUE_MICROS[destinationCurrency];
  const fee = FEE_MINOR_UNITS[sourceCurrency];
  if (source === undefined || destination === undefined || fee === undefined) return undefined;
  const rateMicros =
    sourceCurrency === destinationCurrency
      ? MICRO
      : (source * (MICRO - SPREAD_MICROS) + destination / 2n) / destination;
  return { sourceCurrency, destinationCurrency, rateMicros, feeAmount: fee };
}

/**
 * What an amount (minor units of `from`) is worth in `to`, at the table's
 * mid-market value (no spread, no fee), rounded up so that a conversion never
 * makes an amount look smaller; undefined when either currency has no rate.
 */
export function valueIn(amount: bigint, from: string, to: string): bigint | undefined {
  const source = USD_VALUE_MICROS[from];
  const target = USD_VALUE_MICROS[to];
  if (source === undefined || target === undefined) return undefined;
  if (from === to) return amount;
  return (amount * source + target - 1n) / target;
}

export function rateAsNumber(rateMicros: bigint): number {
  return Number(rateMicros) / Number(MICRO);
}

/**
 * The end of the cache window `now` falls in: rates are fixed per 5-minute
 * window, the same for every caller and every server process.
 */
export function cachedUntil(now: Date): Date {
  const windowMs = RATE_CACHE_SECONDS * 1000;
  return new Date((Math.floor(now.getTime() / windowMs) + 1) * windowMs);
}

/** A platform's limits on what it sends in a currency (its configured supportedCurrencies). */
export interface SendingLimits {
  currencyCode: string;
  minAmount: number;
  maxAmount: number;
}

/**
 * GET /exchange-rates: for each supported pair (optionally narrowed), one
 * entry per payment rail of the destination currency, pricing `sendingAmount`
 * with the fixed fee taken first. Crypto destinations have no payment rail
 * and are priced by quotes only.
 */
export function exchangeRates(
  now: Date,
  filter: { sourceCurrency?: string; destinationCurrency?: string[]; sendingAmount?: number },
  limits: readonly SendingLimits[],
  railsOf: (currency: string) => readonly string[],
): Schemas["ExchangeRateListResponse"] {
  const sendingAmount = filter.sendingAmount ?? 10_000;
  const windowStart = new Date(cachedUntil(now).getTime() - RATE_CACHE_SECONDS * 1000);
  const data: Schemas["ExchangeRate"][] = [];
  for (const source of SUPPORTED_CURRENCIES) {
    if (filter.sourceCurrency && filter.sourceCurrency !== source) continue;
    const limit = limits.find((l) => l.currencyCode === source);
    for (const destination of SUPPORTED_CURRENCIES) {
      if (filter.destinationCurrency?.length && !filter.destinationCurrency.includes(destination)) {
        continue;
      }
      const rate = rateFor(source, destination);
      const sourceInfo = currencyInfo(source);
      const destinationInfo = currencyInfo(destination);
      if (!rate || !sourceInfo || !destinationInfo) continue;
      const receiving = quoteAmounts(rate, "SENDING", BigInt(sendingAmount))?.receivingAmount ?? 0n;
      for (const rail of railsOf(destination)) {
        data.push({
          sourceCurrency: sourceInfo,
          destinationCurrency: destinationInfo,
          destinationPaymentRail: rail as Schemas["PaymentRail"],
          minSendingAmount: limit?.minAmount ?? 1,
          maxSendingAmount: limit?.maxAmount ?? MAX_AMOUNT_NUMBER,
          sendingAmount,
          receivingAmount: Number(receiving),
          exchangeRate: rateAsNumber(rate.rateMicros),
          fees: { fixed: Number(rate.feeAmount), total: Number(rate.feeAmount) },
          updatedAt: windowStart.toISOString(),
        });
      }
    }
  }
  return { data };
}

export interface QuoteAmounts {
  sendingAmount: bigint;
  receivingAmount: bigint;
}

/**
 * Amounts of a quote with one side locked. The fee is included in what the
 * sender pays; conversions round in the platform's favour (what is received
 * down, what is paid up). Undefined when the locked amount cannot cover the fee.
 */
export function quoteAmounts(
  rate: Rate,
  lockedSide: "SENDING" | "RECEIVING",
  lockedAmount: bigint,
): QuoteAmounts | undefined {
  if (lockedSide === "SENDING") {
    const converted = ((lockedAmount - rate.feeAmount) * rate.rateMicros) / MICRO;
    if (converted < 1n) return undefined;
    return { sendingAmount: lockedAmount, receivingAmount: converted };
  }
  const principal = (lockedAmount * MICRO + rate.rateMicros - 1n) / rate.rateMicros;
  return { sendingAmount: principal + rate.feeAmount, receivingAmount: lockedAmount };
}
