import type { Schemas } from "@payments-sandbox/client";
import { ApiError, fieldError, invalidInput, isNotFound, notFound } from "../../errors.js";
import { q } from "../../db/query.js";
import type { RequestContext, Services } from "../../http/context.js";
import { currenciesOf } from "../customers/view.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import type { UmaDirectory } from "../uma/directory.js";

// Who pays and who receives a quote: the accounts, customers and UMA
// receivers a quote request names, resolved to the currencies they hold.

export type QuoteRequest = Schemas["QuoteRequest"];

export interface ResolvedDestination {
  receivingCurrency: string;
  customerId: string | null;
  destinationExternalAccountId: string | null;
  receiverAccountId: string | null;
}

export interface ResolvedSource {
  sendingCurrency: string;
  sourceAccountId: string | null;
  /** The internal account's type (an EMBEDDED_WALLET source signs the execution). */
  accountType: string | null;
  customerId: string | null;
}

/**
 * What a request body names and is not there: the live contract answers 400
 * (an unknown UMA receiver is INVALID_RECEIVER), not 404.
 */
export function inBody(field: string) {
  return (err: unknown): never => {
    if (!isNotFound(err)) throw err;
    if (err.code === "UMA_NOT_FOUND") {
      throw new ApiError(400, "INVALID_RECEIVER", err.message, { details: { field } });
    }
    throw invalidInput(err.message, { errors: [fieldError(`body.${field}`, "not found")] });
  };
}

/** Resolves a quote request's source and destination among the platform's accounts and receivers. */
export class QuoteParties {
  constructor(
    private readonly services: Services,
    private readonly accounts: InternalAccountService,
    private readonly externalAccounts: ExternalAccountService,
    private readonly uma: UmaDirectory,
  ) {}

  async source(ctx: RequestContext, source: QuoteRequest["source"]): Promise<ResolvedSource> {
    if (source.sourceType === "ACCOUNT") {
      if (source.accountId.startsWith("ExternalAccount:")) {
        throw invalidInput(
          "The sandbox quotes from internal accounts only; pull from an external account with POST /transfer-in first",
          { field: "source.accountId" },
        );
      }
      const account = await this.accounts.getRow(ctx, source.accountId);
      if (source.customerId !== undefined && source.customerId !== account.customerId) {
        throw invalidInput(`Account ${account.id} does not belong to ${source.customerId}`, {
          field: "source.customerId",
        });
      }
      return {
        sendingCurrency: account.currency,
        sourceAccountId: account.id,
        accountType: account.type,
        customerId: account.customerId,
      };
    }
    if (ctx.agent) {
      throw invalidInput("An agent pays from its customer's internal accounts only", {
        field: "source.sourceType",
      });
    }
    if (source.customerId !== undefined) await this.customerRegion(ctx, source.customerId);
    return {
      sendingCurrency: source.currency,
      sourceAccountId: null,
      accountType: null,
      customerId: source.customerId ?? null,
    };
  }

  async destination(
    ctx: RequestContext,
    destination: QuoteRequest["destination"],
  ): Promise<ResolvedDestination> {
    if (destination.destinationType === "ACCOUNT") {
      if (destination.accountId.startsWith("InternalAccount:")) {
        // A conversion into one of the platform's internal accounts.
        const account = await this.accounts.getRow(ctx, destination.accountId);
        return {
          receivingCurrency: account.currency,
          customerId: account.customerId,
          destinationExternalAccountId: null,
          receiverAccountId: account.id,
        };
      }
      const external = await this.externalAccounts.getRow(ctx, destination.accountId);
      return {
        receivingCurrency: external.currency,
        customerId: external.customerId,
        destinationExternalAccountId: external.id,
        receiverAccountId: null,
      };
    }
    const receiver = await this.uma.receiver(ctx, destination.umaAddress);
    if (receiver.kind === "SIMULATED") {
      const currency = destination.currency ?? receiver.currency;
      if (receiver.currency !== currency) {
        throw new ApiError(
          400,
          "INVALID_CURRENCY",
          `${destination.umaAddress} receives ${receiver.currency} only`,
        );
      }
      return {
        receivingCurrency: currency,
        customerId: null,
        destinationExternalAccountId: null,
        receiverAccountId: null,
      };
    }
    // Not the sandbox UMA host: one of the platform's own customers.
    const { customer, address } = receiver;
    const currency = destination.currency ?? currenciesOf(customer)[0];
    if (currency === undefined) {
      throw new ApiError(400, "INVALID_CURRENCY", `${address.address} receives no currency`);
    }
    const account = await this.uma.accountOf(ctx, customer, address, currency);
    return {
      receivingCurrency: currency,
      customerId: customer.id,
      destinationExternalAccountId: null,
      receiverAccountId: account.id,
    };
  }

  /** The region of one of the platform's customers (404 for another platform's). */
  private async customerRegion(ctx: RequestContext, customerId: string): Promise<string | null> {
    const customer = await this.services.data.one(
      q
        .selectFrom("Customer")
        .select("region")
        .where("id", "=", customerId)
        .where("platformId", "=", ctx.platformId),
    );
    if (!customer) throw notFound("USER_NOT_FOUND", `Customer ${customerId} not found`);
    return customer.region;
  }
}
