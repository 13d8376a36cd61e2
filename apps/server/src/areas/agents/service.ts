import { randomBytes, randomInt } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import { sha256Hex } from "../../crypto/sha256.js";
import type { Clock } from "../../clock.js";
import { insert, q, run, type Row } from "../../db/query.js";
import { isUniqueViolation } from "../../db/errors.js";
import { ApiError, fieldError, invalidInput, notFound, type FieldError } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import {
  countedPage,
  decodeCursor,
  newestCountedPage,
  pageInOrder,
  withinTimes,
  type Page,
} from "../../http/pagination.js";
import { AGENT_TOKEN_PREFIX, type AgentTokenVerifier } from "../../http/authenticator.js";
import type { AgentPrincipal, RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import type { CustomerService } from "../customers/service.js";
import { SUPPORTED_CURRENCIES, valueIn } from "../quotes/exchange-rates.js";
import type { TransactionService } from "../transactions/service.js";
import { toAgentAction, type AgentAction, type AgentActionRow } from "./actions.js";
import type { AgentPolicy } from "./policy.js";
import { usageOf } from "./usage.js";

type AgentRow = Row<"Agent">;
export type Agent = Schemas["Agent"];
export type AgentCreateRequest = Schemas["AgentCreateRequest"];
export type AgentCreateResponse = Schemas["AgentCreateResponse"];
export type AgentDeviceCodeRedeemResponse = Schemas["AgentDeviceCodeRedeemResponse"];
export type AgentDeviceCode = Schemas["AgentDeviceCode"];
type ListPage<T> = Page<T> & { totalCount: number };

/** The calling agent; only AgentAuth operations call what needs it. */
function agentOf(ctx: RequestContext): AgentPrincipal {
  if (!ctx.agent) throw new Error("an agent operation was called without an agent");
  return ctx.agent;
}

function decidedAlready(action: AgentActionRow): ApiError {
  return new ApiError(
    409,
    "INVALID_STATE_TRANSITION",
    `Agent action ${action.id} is ${action.status}: only a PENDING_APPROVAL action can be decided`,
  );
}

/** Seconds a device code can be redeemed, in the platform's sandbox time. */
export const DEVICE_CODE_TTL_SECONDS = 24 * 3600;
// Device codes are typed by people: no vowels (no words), no look-alikes.
// Twelve letters of twenty (about 52 bits): the code alone is the credential
// of an operation that anyone may call, so it must not be guessable.
const DEVICE_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const DEVICE_CODE_GROUPS = 3;

function newDeviceCode(): string {
  const group = () => Array.from({ length: 4 }, () => DEVICE_CODE_ALPHABET[randomInt(20)]).join("");
  return Array.from({ length: DEVICE_CODE_GROUPS }, group).join("-");
}

/** Codes are redeemed in any case (they are typed by people); stored as a hash of the upper case. */
function deviceCodeHash(code: string): string {
  return sha256Hex(code.toUpperCase());
}

function policyOf(row: AgentRow): AgentPolicy {
  return JSON.parse(row.policy) as AgentPolicy;
}

function principalOf(row: AgentRow): AgentPrincipal {
  return {
    agentId: row.id,
    customerId: row.customerId,
    isPaused: row.isPaused,
    policy: policyOf(row),
  };
}

/** A limit kept through a change of the limits' currency, converted at the sandbox's rates. */
function recast(amount: number, from: string, to: string): number {
  const value = valueIn(BigInt(amount), from, to);
  if (value === undefined) {
    throw new ApiError(
      400,
      "INVALID_CURRENCY",
      `policy.spendingLimits.currency: the sandbox has no rates for ${to}; supported currencies: ${SUPPORTED_CURRENCIES.join(", ")}`,
    );
  }
  return Number(value);
}

/** The policy after a partial update (PATCH /agents/{agentId}/policy). */
function mergePolicy(
  current: AgentPolicy,
  change: Schemas["AgentPolicyUpdateRequest"],
): AgentPolicy {
  const limits = current.spendingLimits;
  const update = change.spendingLimits ?? {};
  const currency = update.currency ?? limits.currency;
  const kept = (amount: number) => recast(amount, limits.currency, currency);
  const keptOrNull = (amount: number | null | undefined) =>
    amount === null || amount === undefined ? amount : kept(amount);
  const spendingLimits: AgentPolicy["spendingLimits"] = {
    currency,
    perTransactionLimit: update.perTransactionLimit ?? kept(limits.perTransactionLimit),
  };
  const daily = "dailyLimit" in update ? update.dailyLimit : keptOrNull(limits.dailyLimit);
  if (daily !== undefined) spendingLimits.dailyLimit = daily;
  const count = update.dailyTransactionLimit ?? limits.dailyTransactionLimit;
  if (count !== undefined) spendingLimits.dailyTransactionLimit = count;
  const monthly = "monthlyLimit" in update ? update.monthlyLimit : keptOrNull(limits.monthlyLimit);
  if (monthly !== undefined) spendingLimits.monthlyLimit = monthly;
  const merged: AgentPolicy = {
    permissions: change.permissions ?? current.permissions,
    defaultExecutionMode: change.defaultExecutionMode ?? current.defaultExecutionMode,
    spendingLimits,
  };
  const restrictions = change.accountRestrictions ?? current.accountRestrictions;
  if (restrictions !== undefined) merged.accountRestrictions = restrictions;
  const thresholds =
    change.approvalThresholds !== undefined
      ? { ...current.approvalThresholds, ...change.approvalThresholds }
      : current.approvalThresholds;
  if (thresholds !== undefined) merged.approvalThresholds = thresholds;
  return merged;
}

/**
 * Agents act for one customer under a policy. The platform creates one and
 * hands its one-time device code to the agent software, which redeems it
 * (without platform credentials) for a bearer token. Only hashes of codes
 * and tokens are stored.
 */
export class AgentService implements AgentTokenVerifier {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    private readonly clocks: PlatformClocks,
    private readonly transactions: TransactionService,
  ) {}

  async create(ctx: RequestContext, input: AgentCreateRequest): Promise<AgentCreateResponse> {
    const customer = await this.customers.referencedIn(ctx, "customerId", input.customerId);
    await this.checkPolicy(ctx, customer.id, input.policy);
    const now = ctx.clock.now();
    for (;;) {
      const code = newDeviceCode();
      try {
        const row: AgentRow = {
          id: newId("Agent"),
          platformId: ctx.platformId,
          customerId: customer.id,
          name: input.name,
          policy: JSON.stringify(input.policy),
          deviceCodeHash: deviceCodeHash(code),
          deviceCodeExpiresAt: new Date(now.getTime() + DEVICE_CODE_TTL_SECONDS * 1000),
          deviceCodeRedeemedAt: null,
          isPaused: false,
          createdAt: now,
          updatedAt: now,
        };
        await this.services.data.transaction(() => insert("Agent", row));
        return {
          agent: await this.view(row, now),
          deviceCode: {
            code,
            agentId: row.id,
            expiresAt: row.deviceCodeExpiresAt.toISOString(),
            redeemed: false,
          },
        };
      } catch (err) {
        // A code collision: draw another one.
        if (!isUniqueViolation(err)) throw err;
      }
    }
  }

  /**
   * What the schema cannot say: currencies the sandbox can convert, a
   * threshold's currency, and accounts that are the customer's own internal
   * accounts, each with at most one rule.
   */
  private async checkPolicy(
    ctx: RequestContext,
    customerId: string,
    policy: AgentPolicy,
  ): Promise<void> {
    const currencies: [string, string | undefined][] = [
      ["policy.spendingLimits.currency", policy.spendingLimits.currency],
      ["policy.approvalThresholds.currency", policy.approvalThresholds?.currency],
    ];
    for (const [field, currency] of currencies) {
      if (currency !== undefined && !SUPPORTED_CURRENCIES.includes(currency)) {
        throw new ApiError(
          400,
          "INVALID_CURRENCY",
          `${field}: the sandbox has no rates for ${currency}; supported currencies: ${SUPPORTED_CURRENCIES.join(", ")}`,
        );
      }
    }
    const threshold = policy.approvalThresholds;
    if (threshold?.amount != null && threshold.currency === undefined) {
      throw invalidInput("approvalThresholds.currency is required when amount is set", {
        errors: [fieldError("body.policy.approvalThresholds.currency", "required with amount")],
      });
    }
    const named = [
      ...(policy.accountRestrictions?.allowedAccountIds ?? []).map((id, i) => ({
        id,
        field: `body.policy.accountRestrictions.allowedAccountIds.${i}`,
      })),
      ...(policy.accountRestrictions?.accountRules ?? []).map((rule, i) => ({
        id: rule.accountId,
        field: `body.policy.accountRestrictions.accountRules.${i}.accountId`,
      })),
    ];
    if (named.length === 0) return;
    const owned = new Set(
      (
        await this.services.data.all(
          q
            .selectFrom("InternalAccount")
            .select("id")
            .where("platformId", "=", ctx.platformId)
            .where("customerId", "=", customerId)
            .where(
              "id",
              "in",
              named.map((n) => n.id),
            ),
        )
      ).map((row) => row.id),
    );
    const errors: FieldError[] = named
      .filter((n) => !owned.has(n.id))
      .map((n) => fieldError(n.field, "not an internal account of the customer"));
    const ruled = new Set<string>();
    (policy.accountRestrictions?.accountRules ?? []).forEach((rule, i) => {
      if (ruled.has(rule.accountId)) {
        errors.push(
          fieldError(
            `body.policy.accountRestrictions.accountRules.${i}.accountId`,
            "a second rule for the same account",
          ),
        );
      }
      ruled.add(rule.accountId);
    });
    const first = errors[0];
    if (first !== undefined) {
      throw invalidInput(`${first.field}: ${first.message}`, { errors });
    }
  }

  private async getRow(ctx: RequestContext, id: string): Promise<AgentRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("Agent")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Agent ${id} not found`);
    return row;
  }

  /** One agent of this platform, with its usage so far. */
  async get(ctx: RequestContext, id: string): Promise<Agent> {
    return this.view(await this.getRow(ctx, id), ctx.clock.now());
  }

  /** The calling agent (GET /agents/me), as the platform sees it. */
  me(ctx: RequestContext): Promise<Agent> {
    return this.get(ctx, agentOf(ctx).agentId);
  }

  async list(ctx: RequestContext, filter: Query<"listAgents">): Promise<ListPage<Agent>> {
    let query = q
      .selectFrom("Agent")
      .where("platformId", "=", ctx.platformId)
      .$call(withinTimes(filter));
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.isPaused !== undefined) query = query.where("isPaused", "=", filter.isPaused);
    if (filter.isConnected !== undefined) {
      query = query.where("deviceCodeRedeemedAt", filter.isConnected ? "is not" : "is", null);
    }
    const page = await newestCountedPage(this.services.data, query, filter, (row) => row);
    const now = ctx.clock.now();
    return { ...page, data: await Promise.all(page.data.map((row) => this.view(row, now))) };
  }

  /** PATCH /agents/{agentId}: a new name, or paused (refused from its next request on) or resumed. */
  async update(
    ctx: RequestContext,
    id: string,
    change: Schemas["AgentUpdateRequest"],
  ): Promise<Agent> {
    if (change.name === undefined && change.isPaused === undefined) {
      throw invalidInput("Give name, isPaused or both");
    }
    const row = await this.getRow(ctx, id);
    const now = ctx.clock.now();
    const updated: AgentRow = {
      ...row,
      name: change.name ?? row.name,
      isPaused: change.isPaused ?? row.isPaused,
      updatedAt: now,
    };
    await this.services.data.transaction(() =>
      run(
        q
          .updateTable("Agent")
          .set({ name: updated.name, isPaused: updated.isPaused, updatedAt: now })
          .where("id", "=", row.id)
          .where("platformId", "=", ctx.platformId),
      ),
    );
    return this.view(updated, now);
  }

  /** PATCH /agents/{agentId}/policy: the merged policy is checked like a new agent's. */
  async updatePolicy(
    ctx: RequestContext,
    id: string,
    change: Schemas["AgentPolicyUpdateRequest"],
  ): Promise<Agent> {
    const row = await this.getRow(ctx, id);
    const policy = mergePolicy(policyOf(row), change);
    await this.checkPolicy(ctx, row.customerId, policy);
    const now = ctx.clock.now();
    const updated: AgentRow = { ...row, policy: JSON.stringify(policy), updatedAt: now };
    await this.services.data.transaction(() =>
      run(
        q
          .updateTable("Agent")
          .set({ policy: updated.policy, updatedAt: now })
          .where("id", "=", row.id)
          .where("platformId", "=", ctx.platformId),
      ),
    );
    return this.view(updated, now);
  }

  /**
   * DELETE /agents/{agentId}: the agent and its access tokens go in one
   * transaction, so its next request is refused. Its actions and
   * transactions stay, as history and for the platform to decide.
   */
  async delete(ctx: RequestContext, id: string): Promise<void> {
    const row = await this.getRow(ctx, id);
    await this.services.data.transaction(function* () {
      yield* run(
        q
          .deleteFrom("AgentAccessToken")
          .where("agentId", "=", row.id)
          .where("platformId", "=", ctx.platformId),
      );
      yield* run(
        q.deleteFrom("Agent").where("id", "=", row.id).where("platformId", "=", ctx.platformId),
      );
    });
  }

  /**
   * POST /agents/{agentId}/device-codes: a fresh code for an agent not yet
   * connected; storing its hash in place of the old one retires the old one.
   */
  async regenerateCode(ctx: RequestContext, id: string): Promise<AgentDeviceCode> {
    const row = await this.getRow(ctx, id);
    const connected = () =>
      new ApiError(
        409,
        "CONFLICT",
        `Agent ${id} is connected already: its device code was redeemed`,
      );
    if (row.deviceCodeRedeemedAt !== null) throw connected();
    const now = ctx.clock.now();
    const expiresAt = new Date(now.getTime() + DEVICE_CODE_TTL_SECONDS * 1000);
    for (;;) {
      const code = newDeviceCode();
      try {
        const count = await this.services.data.transaction(() =>
          run(
            q
              .updateTable("Agent")
              .set({ deviceCodeHash: deviceCodeHash(code), deviceCodeExpiresAt: expiresAt })
              .where("id", "=", row.id)
              .where("platformId", "=", ctx.platformId)
              // Redeemed meanwhile: the agent is connected.
              .where("deviceCodeRedeemedAt", "is", null),
          ),
        );
        if (count !== 1) throw connected();
        return { code, agentId: row.id, expiresAt: expiresAt.toISOString(), redeemed: false };
      } catch (err) {
        // A code collision: draw another one.
        if (!isUniqueViolation(err)) throw err;
      }
    }
  }

  /** GET /agents/device-codes/{code}/status: only the platform's own codes are found. */
  async codeStatus(
    ctx: RequestContext,
    code: string,
  ): Promise<Schemas["AgentDeviceCodeStatusResponse"]> {
    const row = await this.services.data.one(
      q
        .selectFrom("Agent")
        .select("deviceCodeRedeemedAt")
        .where("deviceCodeHash", "=", deviceCodeHash(code))
        .where("platformId", "=", ctx.platformId),
    );
    if (!row)
      throw notFound("REFERENCE_NOT_FOUND", "No agent of this platform has this device code");
    return { code, redeemed: row.deviceCodeRedeemedAt !== null };
  }

  /** The action recording the movement an agent just started (its transaction's). */
  async actionOf(ctx: RequestContext, transactionId: string): Promise<AgentAction> {
    const row = await this.services.data.one(
      q
        .selectFrom("AgentAction")
        .selectAll()
        .where("transactionId", "=", transactionId)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw new Error(`transaction ${transactionId} has no agent action`);
    return this.viewAction(row);
  }

  private async actionRow(
    ctx: RequestContext,
    agentId: string,
    actionId: string,
  ): Promise<AgentActionRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("AgentAction")
        .selectAll()
        .where("id", "=", actionId)
        .where("agentId", "=", agentId)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Agent action ${actionId} not found`);
    return row;
  }

  /** GET /agents/me/actions/{actionId}: the calling agent's own actions only. */
  async ownAction(ctx: RequestContext, actionId: string): Promise<AgentAction> {
    return this.viewAction(await this.actionRow(ctx, agentOf(ctx).agentId, actionId));
  }

  /** GET /agents/me/actions: the calling agent's actions, newest first. */
  async ownActions(
    ctx: RequestContext,
    filter: Query<"agentListActions">,
  ): Promise<ListPage<AgentAction>> {
    let query = q
      .selectFrom("AgentAction")
      .where("platformId", "=", ctx.platformId)
      .where("agentId", "=", agentOf(ctx).agentId);
    if (filter.status) query = query.where("status", "=", filter.status);
    const page = await newestCountedPage(this.services.data, query, filter, (row) => row);
    return { ...page, data: await this.viewActions(page.data) };
  }

  /** GET /agents/approvals: the platform's actions waiting for its decision. */
  async approvals(
    ctx: RequestContext,
    filter: Query<"listAgentApprovals">,
  ): Promise<ListPage<AgentAction>> {
    let query = q
      .selectFrom("AgentAction")
      .where("platformId", "=", ctx.platformId)
      .where("status", "=", "PENDING_APPROVAL");
    if (filter.agentId) query = query.where("agentId", "=", filter.agentId);
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.startDate) query = query.where("createdAt", ">=", new Date(filter.startDate));
    if (filter.endDate) query = query.where("createdAt", "<=", new Date(filter.endDate));
    const page = await countedPage(
      this.services.data,
      {
        rows: query
          .selectAll()
          .$call(pageInOrder(filter.sortOrder, decodeCursor(filter.cursor), filter.limit)),
        count: query.select((eb) => eb.fn.countAll().as("count")),
      },
      filter.limit,
      (row) => row,
    );
    return { ...page, data: await this.viewActions(page.data) };
  }

  /**
   * POST /agents/{agentId}/actions/{actionId}/approve: the held transaction
   * is approved through the transactions' decisions, which move the action
   * in the same database transaction. A quote that expired while it waited
   * is refused instead, and the action FAILS.
   */
  async approve(ctx: RequestContext, agentId: string, actionId: string): Promise<AgentAction> {
    const action = await this.pendingAction(ctx, agentId, actionId);
    const expired = await this.quoteExpired(ctx, action);
    await this.decided(() =>
      expired
        ? this.transactions.reject(ctx, action.transactionId, { failed: true })
        : this.transactions.approve(ctx, action.transactionId),
    );
    return this.viewAction(await this.actionRow(ctx, agentId, actionId));
  }

  /** POST /agents/{agentId}/actions/{actionId}/reject: nothing moves; the reason is kept. */
  async reject(
    ctx: RequestContext,
    agentId: string,
    actionId: string,
    reason: string | undefined,
  ): Promise<AgentAction> {
    const action = await this.pendingAction(ctx, agentId, actionId);
    await this.decided(() => this.transactions.reject(ctx, action.transactionId, { reason }));
    return this.viewAction(await this.actionRow(ctx, agentId, actionId));
  }

  private async pendingAction(
    ctx: RequestContext,
    agentId: string,
    actionId: string,
  ): Promise<AgentActionRow> {
    const action = await this.actionRow(ctx, agentId, actionId);
    if (action.status !== "PENDING_APPROVAL") throw decidedAlready(action);
    return action;
  }

  /** A decision that lost the race to another one is the same 409 as one made before. */
  private async decided(decide: () => Promise<unknown>): Promise<void> {
    try {
      await decide();
    } catch (err) {
      if (err instanceof ApiError && err.code === "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL") {
        throw new ApiError(409, "INVALID_STATE_TRANSITION", "This action was decided already");
      }
      throw err;
    }
  }

  private async quoteExpired(ctx: RequestContext, action: AgentActionRow): Promise<boolean> {
    if (action.quoteId === null) return false;
    const quote = await this.services.data.one(
      q
        .selectFrom("Quote")
        .select("expiresAt")
        .where("id", "=", action.quoteId)
        .where("platformId", "=", ctx.platformId),
    );
    return quote !== undefined && quote.expiresAt <= ctx.clock.now();
  }

  private async viewAction(row: AgentActionRow): Promise<AgentAction> {
    const [view] = await this.viewActions([row]);
    return view!;
  }

  /** Actions with their customers' platform ids, quotes and transactions, read in one query each. */
  private async viewActions(rows: AgentActionRow[]): Promise<AgentAction[]> {
    const first = rows[0];
    if (!first) return [];
    const platformId = first.platformId;
    const ids = (pick: (row: AgentActionRow) => string | null) => [
      ...new Set(rows.map(pick).filter((id): id is string => id !== null)),
    ];
    const data = this.services.data;
    const customerIds = ids((row) => row.customerId);
    const quoteIds = ids((row) => row.quoteId);
    const transactionIds = ids((row) =>
      row.status === "APPROVED" || row.status === "FAILED" ? row.transactionId : null,
    );
    const [customers, quotes, transactionRows] = await Promise.all([
      data.all(
        q
          .selectFrom("Customer")
          .select(["id", "platformCustomerId"])
          .where("platformId", "=", platformId)
          .where("id", "in", customerIds),
      ),
      quoteIds.length === 0
        ? []
        : data.all(
            q
              .selectFrom("Quote")
              .selectAll()
              .where("platformId", "=", platformId)
              .where("id", "in", quoteIds),
          ),
      transactionIds.length === 0
        ? []
        : data.all(
            q
              .selectFrom("Transaction")
              .selectAll()
              .where("platformId", "=", platformId)
              .where("id", "in", transactionIds),
          ),
    ]);
    const transactions = await this.transactions.view(transactionRows);
    const byId = <T extends { id: string }>(items: readonly T[]) =>
      new Map(items.map((item) => [item.id, item]));
    const [customerById, quoteById, transactionById] = [
      byId(customers),
      byId(quotes),
      byId(transactions),
    ];
    return rows.map((row) =>
      toAgentAction(row, {
        platformCustomerId: customerById.get(row.customerId)?.platformCustomerId ?? "",
        quote: row.quoteId === null ? undefined : quoteById.get(row.quoteId),
        transaction: transactionById.get(row.transactionId),
      }),
    );
  }

  private async view(row: AgentRow, now: Date): Promise<Agent> {
    return {
      id: row.id,
      name: row.name,
      customerId: row.customerId,
      isPaused: row.isPaused,
      isConnected: row.deviceCodeRedeemedAt !== null,
      policy: policyOf(row),
      usage: await usageOf(this.services.data, row, now),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  /**
   * Exchanges a device code for an access token, once, before it expires on
   * its platform's sandbox clock. Called without credentials: the code is
   * found among every platform's, and the answer tells nothing of the agent
   * beyond what the code grants.
   */
  async redeem(code: string): Promise<AgentDeviceCodeRedeemResponse> {
    const agent = await this.services.data.one(
      q.selectFrom("Agent").selectAll().where("deviceCodeHash", "=", deviceCodeHash(code)),
    );
    if (!agent) throw notFound("REFERENCE_NOT_FOUND", "No agent has this device code");
    const now = (await this.clocks.forPlatform(agent.platformId)).now();
    const redeemedAlready = () => invalidInput("This device code was redeemed already");
    if (agent.deviceCodeRedeemedAt !== null) throw redeemedAlready();
    if (agent.deviceCodeExpiresAt <= now) {
      const expiresAt = agent.deviceCodeExpiresAt.toISOString();
      throw invalidInput(`This device code expired at ${expiresAt}`, { expiresAt });
    }
    const accessToken = `${AGENT_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const redeemed = await this.services.data.transaction(function* () {
      // Conditional on not yet redeemed: of two concurrent redemptions one wins.
      const count = yield* run(
        q
          .updateTable("Agent")
          .set({ deviceCodeRedeemedAt: now, updatedAt: now })
          .where("id", "=", agent.id)
          .where("platformId", "=", agent.platformId)
          .where("deviceCodeRedeemedAt", "is", null),
      );
      if (count !== 1) return false;
      yield* insert("AgentAccessToken", {
        tokenHash: sha256Hex(accessToken),
        agentId: agent.id,
        platformId: agent.platformId,
        // The agent cannot get another code yet: its token lasts as long as it does.
        expiresAt: null,
        createdAt: now,
      });
      return true;
    });
    if (!redeemed) throw redeemedAlready();
    return {
      agentId: agent.id,
      agentName: agent.name,
      accessToken,
      policy: policyOf(agent),
    };
  }

  async verify(
    accessToken: string,
    clocks: PlatformClocks,
  ): Promise<{ platformId: string; agent: AgentPrincipal; clock: Clock } | undefined> {
    if (!accessToken.startsWith(AGENT_TOKEN_PREFIX)) return undefined;
    const token = await this.services.data.one(
      q.selectFrom("AgentAccessToken").selectAll().where("tokenHash", "=", sha256Hex(accessToken)),
    );
    if (!token) return undefined;
    const clock = await clocks.forPlatform(token.platformId);
    // Tokens issued before tokens lasted as long as their agent keep their hour.
    if (token.expiresAt !== null && token.expiresAt <= clock.now()) return undefined;
    const agent = await this.services.data.one(
      q
        .selectFrom("Agent")
        .selectAll()
        .where("id", "=", token.agentId)
        .where("platformId", "=", token.platformId),
    );
    if (!agent) return undefined;
    return { platformId: agent.platformId, agent: principalOf(agent), clock };
  }
}
