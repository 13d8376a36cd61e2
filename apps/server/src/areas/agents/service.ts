import { createHash, randomBytes, randomInt } from "node:crypto";
import type { Schemas } from "@sandbox/client";
import type { Clock } from "../../clock.js";
import { insert, q, run, type Row } from "../../db/query.js";
import { isUniqueViolation } from "../../db/errors.js";
import { notFound } from "../../errors.js";
import type { AgentTokenVerifier } from "../../http/authenticator.js";
import type { AgentPrincipal, RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import type { CustomerService } from "../customers/service.js";

type AgentRow = Row<"Agent">;
export type Agent = Schemas["Agent"];
export type AgentCreate = Schemas["AgentCreate"];
export type AgentAccessToken = Schemas["AgentAccessToken"];

/** Seconds an access token is valid, in the platform's sandbox time. */
export const AGENT_TOKEN_TTL_SECONDS = 3600;
const TOKEN_PREFIX = "agt_";
// Device codes are typed by people: no vowels (no words), no look-alikes.
const DEVICE_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

function sha256(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

function newDeviceCode(): string {
  const chars = Array.from({ length: 8 }, () => DEVICE_CODE_ALPHABET[randomInt(20)]);
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`;
}

function principalOf(row: AgentRow): AgentPrincipal {
  return {
    agentId: row.id,
    customerId: row.customerId,
    maxTransactionAmount: row.maxTransactionAmount,
    approvalRequiredAbove: row.approvalRequiredAbove,
  };
}

/**
 * Agents act for one customer under a policy. The platform creates one and
 * hands its one-time device code to the agent, which redeems it for a bearer
 * token. Only hashes of codes and tokens are stored.
 */
export class AgentService implements AgentTokenVerifier {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  async create(ctx: RequestContext, input: AgentCreate): Promise<Agent> {
    const customer = await this.customers.getActiveRow(ctx, input.customerId);
    const now = ctx.clock.now();
    for (;;) {
      const deviceCode = newDeviceCode();
      try {
        const row = {
          id: newId("Agent"),
          platformId: ctx.platformId,
          customerId: customer.id,
          maxTransactionAmount: BigInt(input.policy.maxTransactionAmount),
          approvalRequiredAbove: BigInt(input.policy.approvalRequiredAbove),
          deviceCodeHash: sha256(deviceCode),
          createdAt: now,
          updatedAt: now,
        };
        await this.services.data.transaction(() => insert("Agent", row));
        return {
          id: row.id,
          customerId: row.customerId,
          policy: {
            maxTransactionAmount: Number(row.maxTransactionAmount),
            approvalRequiredAbove: Number(row.approvalRequiredAbove),
          },
          deviceCode,
          createdAt: row.createdAt.toISOString(),
        };
      } catch (err) {
        // A code collision: draw another one.
        if (!isUniqueViolation(err)) throw err;
      }
    }
  }

  /** Exchanges a device code for an access token, once. */
  async redeem(ctx: RequestContext, code: string): Promise<AgentAccessToken> {
    const now = ctx.clock.now();
    const unknown = () =>
      notFound("REFERENCE_NOT_FOUND", "No agent has this device code, or it was already redeemed");
    const agent = await this.services.data.one(
      q
        .selectFrom("Agent")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("deviceCodeHash", "=", sha256(code.toUpperCase())),
    );
    if (!agent) throw unknown();
    const accessToken = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
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
        tokenHash: sha256(accessToken),
        agentId: agent.id,
        platformId: agent.platformId,
        expiresAt: new Date(now.getTime() + AGENT_TOKEN_TTL_SECONDS * 1000),
        createdAt: now,
      });
      return true;
    });
    if (!redeemed) throw unknown();
    return {
      accessToken,
      tokenType: "Bearer",
      expiresIn: AGENT_TOKEN_TTL_SECONDS,
      agentId: agent.id,
      customerId: agent.customerId,
    };
  }

  async verify(
    accessToken: string,
    clocks: PlatformClocks,
  ): Promise<{ platformId: string; agent: AgentPrincipal; clock: Clock } | undefined> {
    if (!accessToken.startsWith(TOKEN_PREFIX)) return undefined;
    const token = await this.services.data.one(
      q.selectFrom("AgentAccessToken").selectAll().where("tokenHash", "=", sha256(accessToken)),
    );
    if (!token) return undefined;
    const clock = await clocks.forPlatform(token.platformId);
    if (token.expiresAt <= clock.now()) return undefined;
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
