import type { Schemas } from "@payments-sandbox/client";
import type { Clock } from "../../clock.js";
import { insert, q, run } from "../../db/query.js";
import { isUniqueViolation } from "../../db/errors.js";
import { invalidInput, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { newestCountedPage, withinTimes, type Page } from "../../http/pagination.js";
import type { AgentTokenVerifier } from "../../http/authenticator.js";
import type { AgentPrincipal, RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import type { CustomerService } from "../customers/service.js";
import type { TransactionService } from "../transactions/service.js";
import { agentOf, verifyAccessToken } from "./access-tokens.js";
import type { AgentAction } from "./actions.js";
import { AgentActionViews } from "./action-views.js";
import { AgentApprovals } from "./approvals.js";
import {
  AgentDeviceCodes,
  DEVICE_CODE_TTL_SECONDS,
  deviceCodeHash,
  newDeviceCode,
  type AgentDeviceCode,
  type AgentDeviceCodeRedeemResponse,
} from "./device-codes.js";
import { checkPolicy, mergePolicy } from "./policy-input.js";
import { policyOf, toAgent, type Agent, type AgentRow } from "./view.js";

export { AGENT_TOKEN_PREFIX } from "./access-tokens.js";
export { DEVICE_CODE_TTL_SECONDS };
export type { Agent, AgentDeviceCode, AgentDeviceCodeRedeemResponse };
export type AgentCreateRequest = Schemas["AgentCreateRequest"];
export type AgentCreateResponse = Schemas["AgentCreateResponse"];
type ListPage<T> = Page<T> & { totalCount: number };

/**
 * Agents act for one customer under a policy. The platform creates one and
 * hands its one-time device code to the agent software, which redeems it
 * (without platform credentials) for a bearer token. Only hashes of codes
 * and tokens are stored.
 *
 * This service keeps the agent records; device codes (device-codes.ts),
 * access tokens (access-tokens.ts), policy input (policy-input.ts) and the
 * actions and their approval (action-views.ts, approvals.ts) are their own.
 */
export class AgentService implements AgentTokenVerifier {
  private readonly codes: AgentDeviceCodes;
  private readonly actions: AgentActionViews;
  private readonly decisions: AgentApprovals;

  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    clocks: PlatformClocks,
    transactions: TransactionService,
  ) {
    this.codes = new AgentDeviceCodes(services, clocks);
    this.actions = new AgentActionViews(services, transactions);
    this.decisions = new AgentApprovals(services, transactions, this.actions);
  }

  async create(ctx: RequestContext, input: AgentCreateRequest): Promise<AgentCreateResponse> {
    const customer = await this.customers.referencedIn(ctx, "customerId", input.customerId);
    await checkPolicy(this.services, ctx, customer.id, input.policy);
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
          agent: await toAgent(this.services.data, row, now),
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
    return toAgent(this.services.data, await this.getRow(ctx, id), ctx.clock.now());
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
    return {
      ...page,
      data: await Promise.all(page.data.map((row) => toAgent(this.services.data, row, now))),
    };
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
    return toAgent(this.services.data, updated, now);
  }

  /** PATCH /agents/{agentId}/policy: the merged policy is checked like a new agent's. */
  async updatePolicy(
    ctx: RequestContext,
    id: string,
    change: Schemas["AgentPolicyUpdateRequest"],
  ): Promise<Agent> {
    const row = await this.getRow(ctx, id);
    const policy = mergePolicy(policyOf(row), change);
    await checkPolicy(this.services, ctx, row.customerId, policy);
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
    return toAgent(this.services.data, updated, now);
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

  /** POST /agents/{agentId}/device-codes (device-codes.ts). */
  async regenerateCode(ctx: RequestContext, id: string): Promise<AgentDeviceCode> {
    return this.codes.regenerate(ctx, await this.getRow(ctx, id));
  }

  /** GET /agents/device-codes/{code}/status (device-codes.ts). */
  codeStatus(ctx: RequestContext, code: string): Promise<Schemas["AgentDeviceCodeStatusResponse"]> {
    return this.codes.status(ctx, code);
  }

  /** POST /agents/device-codes/{code}/redeem, without credentials (device-codes.ts). */
  redeem(code: string): Promise<AgentDeviceCodeRedeemResponse> {
    return this.codes.redeem(code);
  }

  verify(
    accessToken: string,
    clocks: PlatformClocks,
  ): Promise<{ platformId: string; agent: AgentPrincipal; clock: Clock } | undefined> {
    return verifyAccessToken(this.services, accessToken, clocks);
  }

  /** The action recording the movement an agent just started (its transaction's). */
  actionOf(ctx: RequestContext, transactionId: string): Promise<AgentAction> {
    return this.actions.ofTransaction(ctx, transactionId);
  }

  /** GET /agents/me/actions/{actionId}: the calling agent's own actions only. */
  async ownAction(ctx: RequestContext, actionId: string): Promise<AgentAction> {
    return this.actions.view(await this.actions.row(ctx, agentOf(ctx).agentId, actionId));
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
    return { ...page, data: await this.actions.views(page.data) };
  }

  /** GET /agents/approvals (approvals.ts). */
  approvals(
    ctx: RequestContext,
    filter: Query<"listAgentApprovals">,
  ): Promise<ListPage<AgentAction>> {
    return this.decisions.pending(ctx, filter);
  }

  /** POST /agents/{agentId}/actions/{actionId}/approve (approvals.ts). */
  approve(ctx: RequestContext, agentId: string, actionId: string): Promise<AgentAction> {
    return this.decisions.approve(ctx, agentId, actionId);
  }

  /** POST /agents/{agentId}/actions/{actionId}/reject (approvals.ts). */
  reject(
    ctx: RequestContext,
    agentId: string,
    actionId: string,
    reason: string | undefined,
  ): Promise<AgentAction> {
    return this.decisions.reject(ctx, agentId, actionId, reason);
  }
}
