import type { Schemas } from "@payments-sandbox/client";
import {
  STABLECOIN_FUNDING_SECONDS,
  STABLECOIN_FUNDING_WINDOW_SECONDS,
  STABLECOIN_PROCESSING_SECONDS,
  stablecoinOperationOutcome,
  type StablecoinOperationOutcome,
} from "@payments-sandbox/sandbox-rules";
import { sha256Digits } from "../../crypto/sha256.js";
import { insert, one, q, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { scheduleJob } from "../../jobs/schedule.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import { amountOutOfRange, inAmountRange } from "../ledger/amount-range.js";
import { debitOrRefuse } from "../ledger/balance-guard.js";
import { credit } from "../ledger/ledger.js";
import type { StablecoinService } from "./service.js";
import {
  toOperation,
  type OperationRow,
  type StablecoinOperation,
  type StablecoinRow,
} from "./view.js";

// Mints and burns of a registered stablecoin. Money moves through the ledger
// only where an internal account takes part, and each movement happens once:
//
// - a mint funded by GRID_INTERNAL_ACCOUNT debits that account (in the
//   stablecoin's base currency) the fiat value when the mint is created;
// - a burn from GRID_INTERNAL_ACCOUNT debits that account (the stablecoin's
//   currency) the amount when the burn is created;
// - a mint into an internal account credits it the amount when it completes;
// - an operation that fails gives back what was debited for it.
//
// Every other side (wires, ACH, Spark wallets, the provider's own balance,
// bank payouts) is outside the platform. The lifecycle runs on the sandbox
// clock as jobs: PENDING_FUNDING (an operation waiting for funds from
// outside) → PROCESSING → COMPLETED or FAILED; never funded → EXPIRED. Each
// step is a conditional update on the status it leaves, so a job that runs
// twice moves nothing twice.

export type MintRequest = Schemas["StablecoinMintRequest"];
export type BurnRequest = Schemas["StablecoinBurnRequest"];
export type OperationFilter = Query<"listStablecoinOperations">;
type Source = Schemas["StablecoinOperationSource"];
type Destination = Schemas["StablecoinOperationDestination"];
type Delivery = Schemas["StablecoinEstimatedDelivery"];
type Rail = Schemas["StablecoinBurnDestination"]["rail"];
type ExternalAccountRow = Row<"ExternalAccount">;

export const STABLECOIN_STEP_JOB = "stablecoin.operation.step";
type Step = "FUND" | "SETTLE" | "EXPIRE";
interface StepPayload {
  operationId: string;
  step: Step;
}

/** How long each payout rail usually takes (guidance shown on burns). */
const RAIL_TIMING: Record<Rail, string> = {
  WIRE: "same business day",
  ACH_CREDIT: "1-3 business days",
  SAME_DAY_ACH_CREDIT: "same business day",
  RTP_CREDIT: "within minutes",
};

/** The sandbox's fictitious receiving bank for wire-funded mints. */
const SANDBOX_WIRE_BANK = { bankName: "Sandbox Bank", routingNumber: "110000000" } as const;

/** An amount in the token's smallest unit, with its value in whole fiat cents; 400 otherwise. */
export function amountsOf(amount: string, decimals: number): { amount: bigint; cents: bigint } {
  const units = BigInt(amount);
  const perCent = 10n ** BigInt(Math.max(decimals - 2, 0));
  if (units === 0n || units % perCent !== 0n) {
    throw new ApiError(
      400,
      "INVALID_AMOUNT",
      `amount must be a positive whole number of cents: a multiple of ${perCent} for ${decimals} decimals`,
      { details: { errors: [fieldError("body.amount", `not a multiple of ${perCent}`)] } },
    );
  }
  if (!inAmountRange(units)) throw amountOutOfRange(`amount ${amount} is too large`);
  return { amount: units, cents: units / perCent };
}

/** A bank account (not a wallet) in `currency`. */
function isBankAccountIn(account: ExternalAccountRow, currency: string): boolean {
  return (
    account.currency === currency &&
    (account.accountType === `${currency}_ACCOUNT` || account.accountType === "SWIFT_ACCOUNT")
  );
}

/** What an operation is, before it is written. */
interface Plan {
  stablecoin: StablecoinRow;
  operationType: "MINT" | "BURN";
  amount: bigint;
  cents: bigint;
  source: Source;
  destination: Destination;
  /** Funds come from outside: the operation waits for them. */
  awaitsFunding: boolean;
  fundingInstructions?: (id: string) => Record<string, unknown>;
  estimatedDelivery?: Delivery;
  /** Debited when the operation is created. */
  debit?: { accountId: string; amount: bigint };
  /** Credited when the operation completes. */
  creditAccountId?: string;
  description?: string | undefined;
}

export class StablecoinOperationService {
  constructor(
    private readonly services: Services,
    private readonly stablecoins: StablecoinService,
    private readonly accounts: InternalAccountService,
    private readonly externalAccounts: ExternalAccountService,
  ) {}

  registerJobs(handlers: JobHandlers): void {
    handlers.register(STABLECOIN_STEP_JOB, (job, tools) => this.stepLater(job, tools));
  }

  async mint(
    ctx: RequestContext,
    stablecoinId: string,
    input: MintRequest,
  ): Promise<StablecoinOperation> {
    const stablecoin = await this.stablecoins.getRow(ctx, stablecoinId);
    const { amount, cents } = amountsOf(input.amount, stablecoin.decimals);
    const plan: Plan = {
      stablecoin,
      operationType: "MINT",
      amount,
      cents,
      source: { type: input.fundingSource.type },
      destination: { accountId: input.destination.accountId },
      awaitsFunding: false,
      description: input.description,
    };
    const funding = input.fundingSource;
    switch (funding.type) {
      case "WIRE":
        plan.awaitsFunding = true;
        plan.fundingInstructions = (id) => ({
          rail: "WIRE",
          ...SANDBOX_WIRE_BANK,
          accountNumber: sha256Digits(`wire:${id}`, 10),
          reference: `SBX-${sha256Digits(`reference:${id}`, 8)}`,
          currency: stablecoin.baseCurrency,
          amount: cents.toString(),
        });
        break;
      case "ACH_DEBIT":
      case "SAME_DAY_ACH_DEBIT": {
        const bank = await this.externalAccounts.getRow(ctx, funding.externalAccountId);
        this.requireBank(bank, stablecoin, "body.fundingSource.externalAccountId");
        plan.source = { type: funding.type, externalAccountId: bank.id };
        break;
      }
      case "GRID_INTERNAL_ACCOUNT": {
        const account = await this.accounts.getRow(ctx, funding.accountId);
        this.requireCurrency(account, stablecoin.baseCurrency, "body.fundingSource.accountId");
        plan.source = { type: funding.type, accountId: account.id };
        plan.debit = { accountId: account.id, amount: cents };
        break;
      }
      case "PROVIDER_INTERNAL_BALANCE":
        plan.source = {
          type: funding.type,
          sourceTokenIdentifier: funding.sourceTokenIdentifier,
          cryptoNetwork: funding.cryptoNetwork,
        };
        break;
    }
    const to = input.destination.accountId;
    if (to.startsWith("InternalAccount:")) {
      const account = await this.accounts.getRow(ctx, to);
      this.requireCurrency(account, stablecoin.currency ?? "", "body.destination.accountId");
      plan.creditAccountId = account.id;
    } else if (to.startsWith("ExternalAccount:")) {
      const wallet = await this.externalAccounts.getRow(ctx, to);
      if (wallet.accountType !== "SPARK_WALLET") {
        throw invalidInput(
          `Minted tokens go to a SPARK_WALLET external account, not ${wallet.accountType}`,
          {
            errors: [fieldError("body.destination.accountId", "not a Spark wallet")],
          },
        );
      }
    } else {
      throw invalidInput("destination.accountId must be an InternalAccount or ExternalAccount id", {
        errors: [fieldError("body.destination.accountId", "not an account id")],
      });
    }
    return this.create(ctx, plan);
  }

  async burn(
    ctx: RequestContext,
    stablecoinId: string,
    input: BurnRequest,
  ): Promise<StablecoinOperation> {
    const stablecoin = await this.stablecoins.getRow(ctx, stablecoinId);
    const { amount, cents } = amountsOf(input.amount, stablecoin.decimals);
    const bank = await this.externalAccounts.getRow(ctx, input.destination.externalAccountId);
    this.requireBank(bank, stablecoin, "body.destination.externalAccountId");
    const rail = input.destination.rail;
    const plan: Plan = {
      stablecoin,
      operationType: "BURN",
      amount,
      cents,
      source: { type: input.source.type },
      destination: { accountId: bank.id, rail },
      awaitsFunding: false,
      estimatedDelivery: {
        rail,
        amount: cents.toString(),
        currency: stablecoin.baseCurrency,
        timing: RAIL_TIMING[rail],
      },
      description: input.description,
    };
    const source = input.source;
    switch (source.type) {
      case "EXTERNAL_ACCOUNT":
        plan.awaitsFunding = true;
        plan.fundingInstructions = (id) => ({
          rail: "SPARK",
          network: "SPARK",
          address: `sparkrt1sbx${sha256Digits(`deposit:${id}`, 30)}`,
          valueType: stablecoin.providerTokenIdentifier,
          amount: amount.toString(),
        });
        break;
      case "GRID_INTERNAL_ACCOUNT": {
        const account = await this.accounts.getRow(ctx, source.accountId);
        this.requireCurrency(account, stablecoin.currency ?? "", "body.source.accountId");
        plan.source = { type: source.type, accountId: account.id };
        plan.debit = { accountId: account.id, amount };
        break;
      }
      case "PROVIDER_INTERNAL_BALANCE":
        break;
    }
    return this.create(ctx, plan);
  }

  async list(
    ctx: RequestContext,
    stablecoinId: string,
    filter: OperationFilter,
  ): Promise<Page<StablecoinOperation> & { totalCount: number }> {
    await this.stablecoins.getRow(ctx, stablecoinId);
    let query = q
      .selectFrom("StablecoinOperation")
      .where("platformId", "=", ctx.platformId)
      .where("stablecoinId", "=", stablecoinId);
    if (filter.operationType) query = query.where("operationType", "=", filter.operationType);
    return newestCountedPage(this.services.data, query, filter, toOperation);
  }

  async get(ctx: RequestContext, id: string): Promise<StablecoinOperation> {
    const row = await this.services.data.one(
      q
        .selectFrom("StablecoinOperation")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row)
      throw new ApiError(404, "REFERENCE_NOT_FOUND", `Stablecoin operation ${id} not found`);
    return toOperation(row);
  }

  private requireCurrency(account: { id: string; currency: string }, currency: string, at: string) {
    if (account.currency === currency) return;
    throw new ApiError(
      400,
      "INVALID_CURRENCY",
      `Internal account ${account.id} holds ${account.currency}; this needs an account in ${currency}`,
      { details: { errors: [fieldError(at, `not a ${currency} account`)] } },
    );
  }

  private requireBank(account: ExternalAccountRow, stablecoin: StablecoinRow, at: string) {
    if (isBankAccountIn(account, stablecoin.baseCurrency)) return;
    throw new ApiError(
      400,
      "INVALID_CURRENCY",
      `External account ${account.id} is not a ${stablecoin.baseCurrency} bank account`,
      { details: { errors: [fieldError(at, `not a ${stablecoin.baseCurrency} bank account`)] } },
    );
  }

  /** Asks the sandbox's provider (the operation table), then writes the operation and its money. */
  private async create(ctx: RequestContext, plan: Plan): Promise<StablecoinOperation> {
    const outcome = stablecoinOperationOutcome(plan.cents.toString()).outcome;
    if (outcome.kind === "REJECT") {
      throw new ApiError(outcome.status, outcome.errorCode, outcome.message);
    }
    const at = ctx.clock.now();
    const realNow = this.services.clock.now();
    const id = newId("StablecoinOperation");
    const neverFunded = plan.awaitsFunding && outcome.kind === "NEVER_FUNDED";
    const row: OperationRow = {
      id,
      platformId: ctx.platformId,
      stablecoinId: plan.stablecoin.id,
      operationType: plan.operationType,
      status: plan.awaitsFunding ? "PENDING_FUNDING" : "PROCESSING",
      amount: plan.amount,
      fiatAmount: plan.cents,
      provider: plan.stablecoin.provider,
      providerEnvironment: plan.stablecoin.providerEnvironment,
      stablecoinProviderAccountId: plan.stablecoin.stablecoinProviderAccountId,
      source: JSON.stringify(plan.source),
      destination: JSON.stringify(plan.destination),
      fundingInstructions: plan.fundingInstructions
        ? JSON.stringify(plan.fundingInstructions(id))
        : null,
      estimatedDelivery: plan.estimatedDelivery ? JSON.stringify(plan.estimatedDelivery) : null,
      outcome: JSON.stringify(outcome),
      debitedAccountId: plan.debit?.accountId ?? null,
      debitedAmount: plan.debit?.amount ?? null,
      creditAccountId: plan.creditAccountId ?? null,
      expiresAt: plan.awaitsFunding
        ? new Date(at.getTime() + STABLECOIN_FUNDING_WINDOW_SECONDS * 1000)
        : null,
      failureReason: null,
      description: plan.description ?? null,
      createdAt: at,
      updatedAt: at,
    };
    const first: { step: Step; delaySeconds: number } = !plan.awaitsFunding
      ? { step: "SETTLE", delaySeconds: STABLECOIN_PROCESSING_SECONDS }
      : neverFunded
        ? { step: "EXPIRE", delaySeconds: STABLECOIN_FUNDING_WINDOW_SECONDS }
        : { step: "FUND", delaySeconds: STABLECOIN_FUNDING_SECONDS };
    const kind = plan.operationType === "MINT" ? "STABLECOIN_MINT_FUNDING" : "STABLECOIN_BURN";
    await this.services.data.transaction(function* () {
      yield* insert("StablecoinOperation", row);
      if (plan.debit) {
        yield* debitOrRefuse({
          platformId: row.platformId,
          accountId: plan.debit.accountId,
          amount: plan.debit.amount,
          kind,
          reference: id,
          at,
        });
      }
      const payload: StepPayload = { operationId: id, step: first.step };
      yield* scheduleJob({
        platformId: row.platformId,
        kind: STABLECOIN_STEP_JOB,
        payload,
        delaySeconds: first.delaySeconds,
        now: realNow,
      });
    });
    return toOperation(row);
  }

  private async stepLater(job: DueJob, tools: JobTools): Promise<void> {
    const { operationId, step } = job.payload as StepPayload;
    const at = tools.clock.now();
    await tools.data.transaction(() => this.step(job, operationId, step, at));
  }

  /** Moves the operation on from the status `step` leaves; nothing when it has left it already. */
  private *step(job: DueJob, operationId: string, step: Step, at: Date): SqlProgram<void> {
    const current = yield* one(
      q
        .selectFrom("StablecoinOperation")
        .selectAll()
        .where("id", "=", operationId)
        .where("platformId", "=", job.platformId),
    );
    if (!current) return;
    const outcome = JSON.parse(current.outcome) as StablecoinOperationOutcome;
    if (step === "FUND") {
      const moved = yield* moveFrom(current, "PENDING_FUNDING", { status: "PROCESSING" }, at);
      if (!moved) return;
      const payload: StepPayload = { operationId, step: "SETTLE" };
      yield* scheduleJob({
        platformId: job.platformId,
        kind: STABLECOIN_STEP_JOB,
        payload,
        delaySeconds: STABLECOIN_PROCESSING_SECONDS,
        now: job.dueAt,
      });
      return;
    }
    if (step === "EXPIRE") {
      yield* moveFrom(current, "PENDING_FUNDING", { status: "EXPIRED" }, at);
      return;
    }
    if (outcome.kind === "FAIL") {
      const moved = yield* moveFrom(
        current,
        "PROCESSING",
        { status: "FAILED", failureReason: outcome.failureReason },
        at,
      );
      if (moved && moved.debitedAccountId !== null && moved.debitedAmount !== null) {
        yield* credit({
          platformId: moved.platformId,
          accountId: moved.debitedAccountId,
          amount: moved.debitedAmount,
          kind: `${moved.operationType === "MINT" ? "STABLECOIN_MINT_FUNDING" : "STABLECOIN_BURN"}_REVERSAL`,
          reference: moved.id,
          at,
        });
      }
      return;
    }
    const moved = yield* moveFrom(current, "PROCESSING", { status: "COMPLETED" }, at);
    if (moved && moved.creditAccountId !== null) {
      yield* credit({
        platformId: moved.platformId,
        accountId: moved.creditAccountId,
        amount: moved.amount,
        kind: "STABLECOIN_MINT",
        reference: moved.id,
        at,
      });
    }
  }
}

/** The operation after a change from `from`, or undefined when it is no longer in `from`. */
function* moveFrom(
  row: OperationRow,
  from: string,
  change: { status: string; failureReason?: string },
  at: Date,
): SqlProgram<OperationRow | undefined> {
  return yield* one(
    q
      .updateTable("StablecoinOperation")
      .set({ ...change, updatedAt: at })
      .where("id", "=", row.id)
      .where("platformId", "=", row.platformId)
      .where("status", "=", from)
      .returningAll(),
  );
}
