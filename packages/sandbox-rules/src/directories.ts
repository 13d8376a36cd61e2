import { SANDBOX_UMA_HOST } from "./uma.js";

// The sandbox's fixed directories: the institutions, UMA providers and VASPs
// that GET /discoveries, GET /uma-providers and GET /vasps list. Every name is
// fictitious, so sandbox data is never mistaken for a real counterparty; the
// lists never change, so tests can rely on them.

/** A receiving institution of a payment corridor (GET /discoveries). */
export interface SandboxInstitution {
  /** The value to pass as `bankName` when creating an external account. */
  readonly bankName: string;
  readonly displayName: string;
  /** ISO 3166-1 alpha-2. */
  readonly country: string;
  /** ISO 4217. */
  readonly currency: string;
}

const institution = (
  country: string,
  currency: string,
  bankName: string,
  displayName: string,
): SandboxInstitution => ({ bankName, displayName, country, currency });

export const SANDBOX_INSTITUTIONS: readonly SandboxInstitution[] = [
  institution("BR", "BRL", "SANDBOX_BANCO_BR", "Banco Sandbox Brasil"),
  institution("BR", "BRL", "SANDBOX_PIX_BR", "Sandbox Pix Pagamentos"),
  institution("CA", "CAD", "SANDBOX_BANK_CA", "Sandbox Bank of Canada"),
  institution("DE", "EUR", "SANDBOX_BANK_DE", "Sandbox Bank Deutschland"),
  institution("FR", "EUR", "SANDBOX_BANQUE_FR", "Banque Sandbox France"),
  institution("GB", "GBP", "SANDBOX_BANK_GB", "Sandbox Bank UK"),
  institution("IN", "INR", "SANDBOX_BANK_IN", "Sandbox Bank India"),
  institution("MX", "MXN", "SANDBOX_BANCO_MX", "Banco Sandbox México"),
  institution("MX", "MXN", "SANDBOX_SPEI_MX", "Sandbox SPEI Pagos"),
  institution("NG", "NGN", "SANDBOX_BANK_NG", "Sandbox Bank Nigeria"),
  institution("PH", "PHP", "SANDBOX_BANK_PH", "Sandbox Bank Philippines"),
  institution("PH", "PHP", "SANDBOX_EWALLET_PH", "Sandbox E-Wallet Philippines"),
  institution("US", "USD", "SANDBOX_BANK_US", "Sandbox Bank USA"),
];

/** The institutions of a corridor: both filters optional, case-insensitive. */
export function institutionsFor(filter: {
  country?: string | undefined;
  currency?: string | undefined;
}): SandboxInstitution[] {
  const country = filter.country?.toUpperCase();
  const currency = filter.currency?.toUpperCase();
  return SANDBOX_INSTITUTIONS.filter(
    (i) =>
      (country === undefined || i.country === country) &&
      (currency === undefined || i.currency === currency),
  );
}

/** A UMA provider of the sandbox's directory (GET /uma-providers). */
export interface SandboxUmaProvider {
  readonly name: string;
  readonly domain: string;
  /** ISO 3166-1 alpha-2 codes. */
  readonly supportedRegions: readonly string[];
  /** ISO 4217 codes. */
  readonly supportedCurrencies: readonly string[];
  /** Legal Entity Identifier: 20 characters, none of them a real one. */
  readonly lei: string;
  /** Whether the provider is on the platform's allow list. */
  readonly allowListed: boolean;
  /** When the provider joined the directory: the list's order. */
  readonly listedAt: string;
}

export const SANDBOX_UMA_PROVIDERS: readonly SandboxUmaProvider[] = [
  {
    name: "Sandbox UMA",
    domain: SANDBOX_UMA_HOST,
    supportedRegions: ["US", "DE", "FR", "MX"],
    supportedCurrencies: ["USD", "EUR", "MXN"],
    lei: "SANDBOX0UMA000000001",
    allowListed: true,
    listedAt: "2025-01-15T00:00:00.000Z",
  },
  {
    name: "Sandbox Remit",
    domain: "remit.sandbox.uma.money",
    supportedRegions: ["US", "GB", "CA"],
    supportedCurrencies: ["USD", "GBP", "CAD"],
    lei: "SANDBOX0UMA000000002",
    allowListed: true,
    listedAt: "2025-03-01T00:00:00.000Z",
  },
  {
    name: "Sandbox Blocked Exchange",
    domain: "blocked.sandbox.uma.money",
    supportedRegions: ["BR", "MX"],
    supportedCurrencies: ["BRL", "MXN", "USD"],
    lei: "SANDBOX0UMA000000003",
    allowListed: false,
    listedAt: "2025-05-20T00:00:00.000Z",
  },
];

/** A virtual asset service provider of the sandbox's directory (GET /vasps). */
export interface SandboxVasp {
  /** The value to pass as `vaspName` when declaring a VASP-hosted counterparty. */
  readonly vaspName: string;
  readonly url?: string;
}

export const SANDBOX_VASPS: readonly SandboxVasp[] = [
  { vaspName: "Sandbox Custody", url: "https://custody.sandbox.example" },
  { vaspName: "Sandbox Exchange", url: "https://exchange.sandbox.example" },
  { vaspName: "Sandbox Self-Custody Wallets" },
  { vaspName: "Sandbox Stablecoin Desk", url: "https://desk.sandbox.example" },
  { vaspName: "Sandbox Trading", url: "https://trading.sandbox.example" },
];
