import type { Schemas } from "@payments-sandbox/client";
import { parseUmaAddress } from "@payments-sandbox/sandbox-rules";
import { insert } from "../../db/query.js";
import { ApiError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import { currenciesOf, type CustomerService } from "../customers/service.js";
import { MAX_AMOUNT_NUMBER } from "../ledger/amount-range.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import { currencyInfo, rateAsNumber, rateFor } from "../quotes/exchange-rates.js";
import type { UmaDirectory } from "../uma/directory.js";

export type ReceiverUmaLookup = Schemas["ReceiverUmaLookupResponse"];
export type ReceiverExternalAccountLookup = Schemas["ReceiverExternalAccountLookupResponse"];
type CurrencyPreference = Schemas["CurrencyPreference"];

/** Who sends, as a lookup may name them. */
export interface LookupSender {
  customerId?: string | undefined;
  senderUmaAddress?: string | undefined;
}

/**
 * Receiver lookups: what a UMA address or an external account can receive,
 * before quoting. Each lookup is recorded, so a quote can name it.
 */
export class ReceiverService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    private readonly externalAccounts: ExternalAccountService,
    private readonly uma: UmaDirectory,
  ) {}

  async lookupUma(
    ctx: RequestContext,
    receiverUmaAddress: string,
    sender: LookupSender,
  ): Promise<ReceiverUmaLookup> {
    const sending = await this.sendingCurrency(ctx, sender);
    const receiver = await this.uma.receiver(ctx, receiverUmaAddress);
    const { address } = receiver;
    // A simulated receiver takes its one currency; a customer its currencies.
    const currencies =
      receiver.kind === "SIMULATED" ? [receiver.currency] : currenciesOf(receiver.customer);
    const lookupId = await this.record(ctx, "UMA_ADDRESS", address.address, sender, currencies);
    return {
      receiverUmaAddress: address.address,
      supportedCurrencies: preferences(sending, currencies),
      requiredPayerDataFields: [],
      lookupId,
    };
  }

  async lookupExternalAccount(
    ctx: RequestContext,
    accountId: string,
    sender: LookupSender,
  ): Promise<ReceiverExternalAccountLookup> {
    const sending = await this.sendingCurrency(ctx, sender);
    const account = await this.externalAccounts.getRow(ctx, accountId);
    const lookupId = await this.record(ctx, "EXTERNAL_ACCOUNT", account.id, sender, [
      account.currency,
    ]);
    return {
      accountId: account.id,
      supportedCurrencies: preferences(sending, [account.currency]),
      requiredPayerDataFields: [],
      lookupId,
    };
  }

  /** The sender's first currency when the sender is named (the platform's own), else USD. */
  private async sendingCurrency(ctx: RequestContext, sender: LookupSender): Promise<string> {
    if (sender.senderUmaAddress !== undefined) {
      const parsed = parseUmaAddress(sender.senderUmaAddress);
      if (!parsed.ok) {
        throw new ApiError(400, "INVALID_UMA_ADDRESS", `senderUmaAddress: ${parsed.problem}`);
      }
    }
    if (sender.customerId === undefined) return "USD";
    const customer = await this.customers.getActiveRow(ctx, sender.customerId);
    return currenciesOf(customer)[0] ?? "USD";
  }

  private async record(
    ctx: RequestContext,
    kind: "UMA_ADDRESS" | "EXTERNAL_ACCOUNT",
    target: string,
    sender: LookupSender,
    currencies: readonly string[],
  ): Promise<string> {
    const id = newId("LookupRequest");
    await this.services.data.transaction(() =>
      insert("LookupRequest", {
        id,
        platformId: ctx.platformId,
        kind,
        target,
        customerId: sender.customerId ?? null,
        currencies: JSON.stringify(currencies),
        createdAt: ctx.clock.now(),
      }),
    );
    return id;
  }
}

/** The receiver's currencies the sandbox can pay, with the rate from the sending currency. */
function preferences(sending: string, currencies: readonly string[]): CurrencyPreference[] {
  return currencies.flatMap((code) => {
    const currency = currencyInfo(code);
    const rate = rateFor(sending, code) ?? rateFor("USD", code);
    if (!currency || !rate) return [];
    return [
      {
        currency,
        estimatedExchangeRate: rateAsNumber(rate.rateMicros),
        min: 1,
        max: MAX_AMOUNT_NUMBER,
      },
    ];
  });
}
