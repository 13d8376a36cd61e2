import type { Schemas } from "@payments-sandbox/client";
import { ApiError, fieldError, invalidInput } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";
import type { InternalAccountService } from "../internal-accounts/service.js";

type Estimate = Schemas["EstimateCryptoWithdrawalFeeResponse"];
type EstimateRequest = Schemas["EstimateCryptoWithdrawalFeeRequest"];

/**
 * The sandbox's fixed network fees: in the network's own asset, and what
 * that costs in the smallest unit of the currency withdrawn.
 */
const NETWORK_FEES: Readonly<
  Record<string, { networkFee: number; networkFeeAsset: string; inCurrency: number }>
> = {
  SOLANA: { networkFee: 5_000, networkFeeAsset: "SOL", inCurrency: 5 },
  ETHEREUM: { networkFee: 21_000, networkFeeAsset: "ETH", inCurrency: 150 },
  BASE: { networkFee: 1_000, networkFeeAsset: "ETH", inCurrency: 2 },
  POLYGON: { networkFee: 1_000, networkFeeAsset: "POL", inCurrency: 2 },
  PLASMA: { networkFee: 1_000, networkFeeAsset: "XPL", inCurrency: 1 },
  TRON: { networkFee: 1_000_000, networkFeeAsset: "TRX", inCurrency: 100 },
  BITCOIN: { networkFee: 300, networkFeeAsset: "BTC", inCurrency: 300 },
  SPARK: { networkFee: 1, networkFeeAsset: "BTC", inCurrency: 1 },
  LIGHTNING: { networkFee: 1, networkFeeAsset: "BTC", inCurrency: 1 },
};

/** The sandbox charges no application fee of its own. */
const APPLICATION_FEE = 0;

export async function estimateWithdrawalFee(
  ctx: RequestContext,
  accounts: InternalAccountService,
  input: EstimateRequest,
): Promise<Estimate> {
  const account = await accounts.getRow(ctx, input.internalAccountId);
  if (account.type === "INTERNAL_FIAT") {
    throw invalidInput(`${account.id} holds ${account.currency}, not a crypto currency`, {
      errors: [fieldError("body.internalAccountId", "not a crypto account")],
    });
  }
  if (input.currency !== account.currency) {
    throw new ApiError(400, "INVALID_CURRENCY", `${account.id} holds ${account.currency}`, {
      details: { errors: [fieldError("body.currency", `must be ${account.currency}`)] },
    });
  }
  const fees = NETWORK_FEES[input.cryptoNetwork];
  if (!fees) {
    throw invalidInput(`Unknown network ${input.cryptoNetwork}`, {
      errors: [fieldError("body.cryptoNetwork", `one of ${Object.keys(NETWORK_FEES).join(", ")}`)],
    });
  }
  const totalFee = fees.inCurrency + APPLICATION_FEE;
  if (input.amount <= totalFee) {
    throw new ApiError(
      400,
      "INVALID_AMOUNT",
      `${input.amount} does not cover the fee of ${totalFee}`,
      {
        details: { errors: [fieldError("body.amount", `must be more than ${totalFee}`)] },
      },
    );
  }
  return {
    networkFee: fees.networkFee,
    networkFeeAsset: fees.networkFeeAsset,
    applicationFee: APPLICATION_FEE,
    totalFee,
    netAmount: input.amount - totalFee,
  };
}
