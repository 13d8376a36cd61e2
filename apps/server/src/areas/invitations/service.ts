/**
 * UMA invitations: one of a platform's customers invites someone, who claims
 * the invitation with their UMA address; the inviting platform hears of the
 * claim by INVITATION.CLAIMED, written in the claim's transaction.
 *
 * Tenancy. An invitation's code travels in a link to people whose UMA
 * provider may be another platform, so the code names it across the whole
 * sandbox: any platform may read and claim it (the live contract's claim is
 * made by the invitee's side), and only the platform that created it may
 * cancel it, which the live contract answers with 403, not 404 (the code is
 * no secret from the caller, who can read the invitation). Everything else
 * the platforms own stays scoped to them.
 *
 * Time. An invitation keeps its platform's time: its timestamps and its
 * expiry are read on the creating platform's sandbox clock, whoever calls.
 * EXPIRED is not written: a PENDING invitation whose expiresAt has passed
 * reads EXPIRED, and every state change is guarded by the same condition.
 *
 * Configuration. The invitation's url is a link on the platform's UMA
 * domain, so a platform still on the sandbox's placeholder domain cannot
 * create one (the invitation configuration table of packages/sandbox-rules).
 */
import { randomBytes } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import {
  invitationConfigurationOutcome,
  invitationUrl,
  parseUmaAddress,
} from "@payments-sandbox/sandbox-rules";
import type { Clock } from "../../clock.js";
import { isUniqueViolation } from "../../db/errors.js";
import { insert, q, run, type Row } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import { currenciesOf } from "../customers/service.js";
import { currencyAmount } from "../quotes/exchange-rates.js";

export type Invitation = Schemas["UmaInvitation"];
type InvitationStatus = Invitation["status"];
type InvitationRow = Row<"Invitation">;

/** Random bytes of a code: 12 hex characters, unguessable enough to share as a link. */
const CODE_BYTES = 6;
/** Fresh codes tried before giving up, should one already exist. */
const CODE_TRIES = 3;

/** What an invitation reads at `now`: a PENDING one past its expiresAt is EXPIRED. */
export function statusAt(row: InvitationRow, now: Date): InvitationStatus {
  if (row.status === "PENDING" && row.expiresAt !== null && now >= row.expiresAt) {
    return "EXPIRED";
  }
  return row.status as InvitationStatus;
}

export function toInvitation(row: InvitationRow, now: Date): Invitation {
  return {
    code: row.code,
    createdAt: row.createdAt.toISOString(),
    ...(row.claimedAt !== null ? { claimedAt: row.claimedAt.toISOString() } : {}),
    url: row.url,
    ...(row.expiresAt !== null ? { expiresAt: row.expiresAt.toISOString() } : {}),
    inviterUma: row.inviterUma,
    ...(row.inviteeUma !== null ? { inviteeUma: row.inviteeUma } : {}),
    status: statusAt(row, now),
    ...(row.firstName !== null ? { firstName: row.firstName } : {}),
    ...(row.amountToSend !== null && row.currency !== null
      ? { amountToSend: currencyAmount(row.amountToSend, row.currency) }
      : {}),
  };
}

/** Why an invitation can no longer change, or undefined while it is PENDING. */
function notPending(row: InvitationRow, now: Date): ApiError | undefined {
  switch (statusAt(row, now)) {
    case "PENDING":
      return undefined;
    case "CLAIMED":
      return new ApiError(
        400,
        "INVITATION_ALREADY_CLAIMED",
        `Invitation ${row.code} was already claimed`,
      );
    case "CANCELLED":
      return new ApiError(400, "INVITATION_CANCELLED", `Invitation ${row.code} was cancelled`);
    case "EXPIRED":
      return invalidInput(`Invitation ${row.code} expired at ${row.expiresAt?.toISOString()}`, {
        expiresAt: row.expiresAt?.toISOString(),
      });
  }
}

/** A well-formed UMA address of a request field, lower-cased. */
function umaAddressIn(field: string, address: string): string {
  const parsed = parseUmaAddress(address);
  if (!parsed.ok) {
    throw new ApiError(400, "INVALID_UMA_ADDRESS", `${field} ${address}: ${parsed.problem}`, {
      details: { errors: [fieldError(`body.${field}`, parsed.problem)] },
    });
  }
  return parsed.address.address;
}

/** The invitation with its platform's sandbox clock offset, whichever platform asks. */
const invitationWithClock = (code: string) =>
  q
    .selectFrom("Invitation")
    .innerJoin("Platform", "Platform.id", "Invitation.platformId")
    .selectAll("Invitation")
    .select("Platform.clockOffsetSeconds")
    .where("Invitation.code", "=", code);

/** A PENDING invitation that has not expired at `now` (the guard of every change). */
const stillPending = (code: string, now: Date) =>
  q
    .updateTable("Invitation")
    .where("code", "=", code)
    .where("status", "=", "PENDING")
    .where((eb) => eb.or([eb("expiresAt", "is", null), eb("expiresAt", ">", now)]));

export class InvitationService {
  constructor(
    private readonly services: Services,
    private readonly clocks: PlatformClocks,
  ) {}

  /** The invitation and its platform's clock; 404 when no invitation has the code. */
  private async find(code: string): Promise<{ row: InvitationRow; clock: Clock }> {
    const found = await this.services.data.one(invitationWithClock(code));
    if (!found) throw notFound("INVITATION_NOT_FOUND", `No invitation has the code ${code}`);
    const { clockOffsetSeconds, ...row } = found;
    return { row, clock: this.clocks.withOffset(clockOffsetSeconds) };
  }

  async create(ctx: RequestContext, input: Schemas["UmaInvitationCreateRequest"]) {
    const platform = await this.services.data.one(
      q.selectFrom("Platform").select("umaDomain").where("id", "=", ctx.platformId),
    );
    if (!platform) throw new Error(`platform ${ctx.platformId} of an API token does not exist`);
    const { outcome } = invitationConfigurationOutcome(platform.umaDomain);
    if (outcome.kind === "REJECT") {
      throw new ApiError(outcome.status, outcome.errorCode, outcome.message);
    }

    const inviterUma = umaAddressIn("inviterUma", input.inviterUma);
    const inviter = await this.services.data.one(
      q
        .selectFrom("Customer")
        .select(["id", "currencies"])
        .where("platformId", "=", ctx.platformId)
        .where("umaAddress", "=", inviterUma)
        .where("deletedAt", "is", null),
    );
    if (!inviter) {
      throw invalidInput(`None of your active customers has the UMA address ${inviterUma}`, {
        errors: [fieldError("body.inviterUma", "not the umaAddress of an active customer")],
      });
    }
    const now = ctx.clock.now();
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
    if (expiresAt !== null && expiresAt <= now) {
      throw invalidInput(
        `expiresAt ${input.expiresAt} is not in the future (the sandbox clock reads ${now.toISOString()})`,
        { errors: [fieldError("body.expiresAt", "not in the future")] },
      );
    }
    // The amount is in the inviter's currency: its first one.
    const currency = input.amountToSend === undefined ? null : currenciesOf(inviter)[0];
    if (currency === undefined) {
      throw invalidInput(`Customer ${inviter.id} has no currency to express amountToSend in`, {
        errors: [fieldError("body.amountToSend", "the inviter has no currency")],
      });
    }

    for (let attempt = 1; ; attempt++) {
      const code = randomBytes(CODE_BYTES).toString("hex");
      const row: InvitationRow = {
        code,
        platformId: ctx.platformId,
        inviterCustomerId: inviter.id,
        inviterUma,
        inviteeUma: null,
        firstName: input.firstName ?? null,
        amountToSend: input.amountToSend === undefined ? null : BigInt(input.amountToSend),
        currency,
        url: invitationUrl(platform.umaDomain, code),
        status: "PENDING",
        expiresAt,
        claimedAt: null,
        createdAt: now,
        updatedAt: now,
      };
      try {
        await this.services.data.transaction(() => insert("Invitation", row), "eachStep");
        return toInvitation(row, now);
      } catch (err) {
        if (!isUniqueViolation(err) || attempt >= CODE_TRIES) throw err;
      }
    }
  }

  async get(code: string): Promise<Invitation> {
    const { row, clock } = await this.find(code);
    return toInvitation(row, clock.now());
  }

  /**
   * Claims a PENDING invitation for `inviteeUma` and tells its platform, in
   * one transaction. Any platform may claim (see the tenancy note above).
   */
  async claim(code: string, input: Schemas["UmaInvitationClaimRequest"]): Promise<Invitation> {
    const { row, clock } = await this.find(code);
    const now = clock.now();
    const refusal = notPending(row, now);
    if (refusal) throw refusal;
    const inviteeUma = umaAddressIn("inviteeUma", input.inviteeUma);
    if (inviteeUma === row.inviterUma) {
      throw invalidInput(`Invitation ${code} cannot be claimed by its inviter`, {
        errors: [fieldError("body.inviteeUma", "the inviter's own address")],
      });
    }
    const claimed: InvitationRow = {
      ...row,
      status: "CLAIMED",
      inviteeUma,
      claimedAt: now,
      updatedAt: now,
    };
    const invitation = toInvitation(claimed, now);
    const changed = await this.services.data.transaction(function* () {
      const changed = yield* run(
        stillPending(code, now).set({
          status: "CLAIMED",
          inviteeUma,
          claimedAt: now,
          updatedAt: now,
        }),
      );
      if (changed === 1) {
        yield* emitEvent({
          platformId: row.platformId,
          type: "INVITATION.CLAIMED",
          objectId: code,
          data: invitation,
          at: now,
        });
      }
      return changed;
    });
    if (changed === 0) throw await this.lostRace(code);
    return invitation;
  }

  /** Withdraws a PENDING invitation; only its own platform may. */
  async cancel(ctx: RequestContext, code: string): Promise<Invitation> {
    const { row, clock } = await this.find(code);
    if (row.platformId !== ctx.platformId) {
      throw new ApiError(
        403,
        "FORBIDDEN",
        `Only the platform that created invitation ${code} can cancel it`,
      );
    }
    const now = clock.now();
    const refusal = notPending(row, now);
    if (refusal) throw refusal;
    const changed = await this.services.data.execute(
      stillPending(code, now).set({ status: "CANCELLED", updatedAt: now }),
    );
    if (changed === 0) throw await this.lostRace(code);
    return toInvitation({ ...row, status: "CANCELLED", updatedAt: now }, now);
  }

  /**
   * Another request changed the invitation between the read and the guarded
   * write: why it is no longer PENDING, read again (the clock only moves on,
   * so an invitation the guard found expired still reads EXPIRED).
   */
  private async lostRace(code: string): Promise<Error> {
    const { row, clock } = await this.find(code);
    return (
      notPending(row, clock.now()) ?? new Error(`invitation ${code} is PENDING, yet unchanged`)
    );
  }
}
