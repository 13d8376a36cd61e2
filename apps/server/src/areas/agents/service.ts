import { createHash, randomBytes, randomInt } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import type { Clock } from "../../clock.js";
import { insert, q, run, type Row } from "../../db/query.js";
import { isUniqueViolation } from "../../db/errors.js";
import { ApiError, fieldError, invalidInput, notFound, type FieldError } from "../../errors.js";
import type { AgentTokenVerifier } from "../../http/authenticator.js";
import type { AgentPrincipal, RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import type { CustomerService } from "../customers/service.js";
import { SUPPORTED_CURRENCIES } from "../quotes/exchange-rates.js";
import type { AgentPolicy } from "./policy.js";
import { usageOf } from "./usage.js";

type AgentRow = Row<"Agent">;
export type Agent = Schemas["Agent"];
export type AgentCreateRequest = Schemas["AgentCreateRequest"];
export type AgentCreateResponse = Schemas["AgentCreateResponse"];
export type AgentDeviceCodeRedeemResponse = Schemas["AgentDeviceCodeRedeemResponse"];

/** Seconds a device code can be redeemed, in the platform's sandbox time. */
export const DEVICE_CODE_TTL_SECONDS = 24 * 3600;
const TOKEN_PREFIX = "agt_";
// Device codes are typed by people: no vowels (no words), no look-alikes.
// Twelve letters of twenty (about 52 bits): the code alone is the credential
// of an operation that anyone may call, so it must not be guessable.
const DEVICE_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const DEVICE_CODE_GROUPS = 3;

function sha256(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

function newDeviceCode(): string {
  const group = () => Array.from({ length: 4 }, () => DEVICE_CODE_ALPHABET[randomInt(20)]).join("");
  return Array.from({ length: DEVICE_CODE_GROUPS }, group).join("-");
}

/** Codes are redeemed in any case (they are typed by people); stored as a hash of the upper case. */
function deviceCodeHash(code: string): string {
  return sha256(code.toUpperCase());
}

function policyOf(row: AgentRow): AgentPolicy {
  return JSON.parse(row.policy) as AgentPolicy;
}

function principalOf(row: AgentRow): AgentPrincipal {
  return { agentId: row.id, customerId: row.customerId, policy: policyOf(row) };
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

  /** One agent of this platform, with its usage so far. */
  async get(ctx: RequestContext, id: string): Promise<Agent> {
    const row = await this.services.data.one(
      q
        .selectFrom("Agent")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Agent ${id} not found`);
    return this.view(row, ctx.clock.now());
  }

  private async view(row: AgentRow, now: Date): Promise<Agent> {
    return {
      id: row.id,
      name: row.name,
      customerId: row.customerId,
      // No operation pauses an agent yet.
      isPaused: false,
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
    if (!accessToken.startsWith(TOKEN_PREFIX)) return undefined;
    const token = await this.services.data.one(
      q.selectFrom("AgentAccessToken").selectAll().where("tokenHash", "=", sha256(accessToken)),
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
