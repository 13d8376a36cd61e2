import { randomBytes, randomInt } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import { sha256Hex } from "../../crypto/sha256.js";
import { insert, q, run } from "../../db/query.js";
import { isUniqueViolation } from "../../db/errors.js";
import { ApiError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import { AGENT_TOKEN_PREFIX } from "./access-tokens.js";
import { policyOf, type AgentRow } from "./view.js";

// The platform hands an agent's one-time device code to the agent software,
// which redeems it, without platform credentials, for its access token. A
// code not yet redeemed can be replaced; a redeemed one connected its agent.

export type AgentDeviceCode = Schemas["AgentDeviceCode"];
export type AgentDeviceCodeRedeemResponse = Schemas["AgentDeviceCodeRedeemResponse"];

/** Seconds a device code can be redeemed, in the platform's sandbox time. */
export const DEVICE_CODE_TTL_SECONDS = 24 * 3600;
// Device codes are typed by people: no vowels (no words), no look-alikes.
// Twelve letters of twenty (about 52 bits): the code alone is the credential
// of an operation that anyone may call, so it must not be guessable.
const DEVICE_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const DEVICE_CODE_GROUPS = 3;

export function newDeviceCode(): string {
  const group = () => Array.from({ length: 4 }, () => DEVICE_CODE_ALPHABET[randomInt(20)]).join("");
  return Array.from({ length: DEVICE_CODE_GROUPS }, group).join("-");
}

/** Codes are redeemed in any case (they are typed by people); stored as a hash of the upper case. */
export function deviceCodeHash(code: string): string {
  return sha256Hex(code.toUpperCase());
}

/** Replacing, checking and redeeming agents' device codes. */
export class AgentDeviceCodes {
  constructor(
    private readonly services: Services,
    private readonly clocks: PlatformClocks,
  ) {}

  /**
   * POST /agents/{agentId}/device-codes: a fresh code for an agent not yet
   * connected; storing its hash in place of the old one retires the old one.
   */
  async regenerate(ctx: RequestContext, row: AgentRow): Promise<AgentDeviceCode> {
    const connected = () =>
      new ApiError(
        409,
        "CONFLICT",
        `Agent ${row.id} is connected already: its device code was redeemed`,
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
  async status(
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
}
