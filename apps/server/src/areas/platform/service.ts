import type { Schemas } from "@payments-sandbox/client";
import { publicKeyToSpkiPem } from "@payments-sandbox/crypto";
import { isHostName } from "@payments-sandbox/sandbox-rules";
import { publicKeyFromPrivateKey } from "../../crypto/p256-keys.js";
import { one, prepared, q, type Row } from "../../db/query.js";
import { invalidInput, fieldError } from "../../errors.js";
import { checkWebhookEndpoint } from "../webhooks/endpoint-url.js";
import type { RequestContext, Services } from "../../http/context.js";
import { openMissingAccounts } from "../internal-accounts/opening.js";
import { MAX_AMOUNT_NUMBER } from "../ledger/amount-range.js";

export type PlatformConfig = Schemas["PlatformConfig"];
export type PlatformConfigUpdate = Schemas["PlatformConfigUpdateRequest"];
export type SandboxKeys = Schemas["SandboxKeys"];
type CurrencyConfig = Schemas["PlatformCurrencyConfig"];
type PlatformRow = Row<"Platform">;

/** What a platform supports until it says otherwise: USD, both ways, any amount. */
export const DEFAULT_CURRENCIES: CurrencyConfig[] = [
  {
    currencyCode: "USD",
    minAmount: 1,
    maxAmount: MAX_AMOUNT_NUMBER,
    requiredCounterpartyFields: [],
    enabledTransactionTypes: ["INCOMING", "OUTGOING"],
  },
];

/** The platform's supported currencies, as configured or by default. */
export function supportedCurrenciesOf(row: Pick<PlatformRow, "supportedCurrencies">) {
  return row.supportedCurrencies === null
    ? DEFAULT_CURRENCIES
    : (JSON.parse(row.supportedCurrencies) as CurrencyConfig[]);
}

function toPlatformConfig(row: PlatformRow): PlatformConfig {
  const json = <T>(text: string | null): T | undefined =>
    text === null ? undefined : (JSON.parse(text) as T);
  const embedded = json<Schemas["EmbeddedWalletConfig"]>(row.embeddedWalletConfig);
  const tokenization = json<Schemas["CardTokenization2FAConfig"]>(row.cardTokenization2faConfig);
  return {
    id: row.id,
    umaDomain: row.umaDomain,
    ...(row.webhookUrl !== null ? { webhookEndpoint: row.webhookUrl } : {}),
    // The provider's own requirements: the sandbox's simulated providers have none.
    supportedCurrencies: supportedCurrenciesOf(row).map((currency) => ({
      ...currency,
      providerRequiredCustomerFields: [],
      providerRequiredCounterpartyCustomerFields: [],
    })),
    isRegulatedFinancialInstitution: false,
    ...(embedded ? { embeddedWalletConfig: embedded } : {}),
    ...(tokenization ? { cardTokenization2faConfig: tokenization } : {}),
    feeConfigs: json<Schemas["FeeConfig"][]>(row.feeConfigs) ?? [],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function checkCurrencies(currencies: readonly CurrencyConfig[]): void {
  const seen = new Set<string>();
  for (const [i, currency] of currencies.entries()) {
    const at = `body.supportedCurrencies.${i}`;
    if (!/^[A-Z]{3,5}$/.test(currency.currencyCode)) {
      throw invalidInput(`${currency.currencyCode} is not a currency code`, {
        errors: [fieldError(`${at}.currencyCode`, "not a currency code")],
      });
    }
    if (seen.has(currency.currencyCode)) {
      throw invalidInput(`${currency.currencyCode} is listed twice`, {
        errors: [fieldError(`${at}.currencyCode`, "listed twice")],
      });
    }
    seen.add(currency.currencyCode);
    if (currency.minAmount > currency.maxAmount) {
      throw invalidInput(`minAmount of ${currency.currencyCode} is above its maxAmount`, {
        errors: [fieldError(`${at}.minAmount`, "above maxAmount")],
      });
    }
  }
}

const platformRow = prepared((args: { platformId: string }) =>
  q.selectFrom("Platform").selectAll().where("id", "=", args.platformId),
);

export class PlatformService {
  constructor(private readonly services: Services) {}

  private async row(ctx: RequestContext): Promise<PlatformRow> {
    // Every API token belongs to a platform, so the row exists.
    const row = await this.services.data.one(platformRow({ platformId: ctx.platformId }));
    if (!row) throw new Error(`platform ${ctx.platformId} of an API token does not exist`);
    return row;
  }

  async get(ctx: RequestContext): Promise<PlatformConfig> {
    return toPlatformConfig(await this.row(ctx));
  }

  /** The currencies the platform supports, with their limits. */
  async currencies(ctx: RequestContext): Promise<CurrencyConfig[]> {
    return supportedCurrenciesOf(await this.row(ctx));
  }

  /** The platform's public keys, derived from the private halves, which never leave here. */
  async keys(ctx: RequestContext): Promise<SandboxKeys> {
    const row = await this.row(ctx);
    return {
      webhookPublicKey: publicKeyToSpkiPem(publicKeyFromPrivateKey(row.webhookPrivateKey)),
      otpEnclavePublicKey: publicKeyFromPrivateKey(row.otpSigningPrivateKey, false),
    };
  }

  /**
   * Changes the fields sent. Events recorded while no endpoint was set are
   * waiting (PENDING); setting one lets the dispatcher deliver them.
   */
  async update(ctx: RequestContext, input: PlatformConfigUpdate): Promise<PlatformConfig> {
    if (input.webhookEndpoint) checkWebhookEndpoint(input.webhookEndpoint);
    if (input.supportedCurrencies) checkCurrencies(input.supportedCurrencies);
    if (input.umaDomain !== undefined && !isHostName(input.umaDomain)) {
      throw invalidInput("umaDomain is not a host name", {
        errors: [fieldError("body.umaDomain", "not a host name")],
      });
    }
    // Nothing sent, nothing changes: not even `updatedAt`.
    if (Object.values(input).every((value) => value === undefined)) return this.get(ctx);
    const json = (value: unknown) => JSON.stringify(value);
    const row = await this.services.data.transaction(function* () {
      const updated = yield* one(
        q
          .updateTable("Platform")
          .set({
            ...(input.webhookEndpoint !== undefined
              ? { webhookUrl: input.webhookEndpoint === "" ? null : input.webhookEndpoint }
              : {}),
            ...(input.umaDomain !== undefined ? { umaDomain: input.umaDomain.toLowerCase() } : {}),
            ...(input.supportedCurrencies !== undefined
              ? { supportedCurrencies: json(input.supportedCurrencies) }
              : {}),
            ...(input.embeddedWalletConfig !== undefined
              ? { embeddedWalletConfig: json(input.embeddedWalletConfig) }
              : {}),
            ...(input.cardTokenization2faConfig !== undefined
              ? { cardTokenization2faConfig: json(input.cardTokenization2faConfig) }
              : {}),
            ...(input.feeConfigs !== undefined ? { feeConfigs: json(input.feeConfigs) } : {}),
            updatedAt: ctx.clock.now(),
          })
          .where("id", "=", ctx.platformId)
          .returningAll(),
      );
      // A newly supported currency opens the platform's account in it.
      if (updated && input.supportedCurrencies) {
        yield* openMissingAccounts(
          { platformId: ctx.platformId, customerId: null },
          input.supportedCurrencies.map((currency) => currency.currencyCode),
          updated.updatedAt,
        );
      }
      return updated;
    });
    if (!row) throw new Error(`platform ${ctx.platformId} of an API token does not exist`);
    return toPlatformConfig(row);
  }
}
