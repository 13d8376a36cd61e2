/**
 * POST /customers/{customerId}/verify-email and verify-phone, and their
 * `/confirm`: a one-time code sent to the customer's email address or phone
 * number, then confirmed. The sandbox sends nothing; the code it accepts is
 * the contact verification table's (packages/sandbox-rules).
 *
 * A channel has at most one pending code, a row with a due time (expiresAt,
 * on the platform's sandbox clock) and an attempts count; sending again
 * replaces it under a new id. Every change to a code is guarded by that id,
 * so a wrong attempt never counts against a code sent after it was read, and
 * two right answers consume the code once. The customer's verified value is
 * written in the same transaction that consumes the code.
 */
import { issueCode } from "@payments-sandbox/sandbox-rules";
import { one, q, run } from "../../db/query.js";
import { ApiError, fieldError, invalidInput } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import { answerCode, type CodeStore } from "../sca/code-challenge.js";
import { CHANNELS, channelStatus, type ContactChannel } from "./contact-channels.js";
import { toCustomer, type Customer, type CustomerRow, type CustomerService } from "./service.js";

/** A contact code's wrong answers count on its row; the last one deletes it. */
function contactCodeStore(id: string): CodeStore {
  return {
    *countWrong(spent) {
      const counted = yield* one(
        q
          .updateTable("ContactVerificationCode")
          .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
          .where("id", "=", id)
          .returning("attempts"),
      );
      if (counted && spent(counted.attempts)) {
        yield* run(q.deleteFrom("ContactVerificationCode").where("id", "=", id));
      }
      return counted?.attempts;
    },
  };
}

/** No code can be confirmed: the customer must send a new one. */
function noPendingCode(row: CustomerRow, channel: ContactChannel, why: string): ApiError {
  const { noun, path } = CHANNELS[channel];
  return invalidInput(
    `${why}; send a new code with POST /customers/${row.id}/${path}, then confirm it`,
    { errors: [fieldError("body.code", `no ${noun} verification code is pending`)] },
  );
}

export class ContactVerificationService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  /**
   * The contact detail the customer must confirm on this channel. Seed rule
   * 10: 409 when there is none to confirm: `CONFLICT` when verification is
   * not required (the region, or no such detail), as the SCA operations
   * answer; `INVALID_STATE_TRANSITION` when it is already VERIFIED.
   */
  private async pendingContact(
    ctx: RequestContext,
    customerId: string,
    channel: ContactChannel,
  ): Promise<{ row: CustomerRow; contact: string }> {
    const row = await this.customers.getActiveRow(ctx, customerId);
    const { noun, value } = CHANNELS[channel];
    const status = channelStatus(row, channel);
    const contact = value(row);
    if (status === undefined || contact === null) {
      throw new ApiError(
        409,
        "CONFLICT",
        contact === null
          ? `Customer ${row.id} has no ${noun} to verify`
          : `Customer ${row.id} does not need to verify its ${noun} (region ${row.region ?? "not set"})`,
      );
    }
    if (status === "VERIFIED") {
      throw new ApiError(
        409,
        "INVALID_STATE_TRANSITION",
        `The ${noun} of customer ${row.id} is already VERIFIED`,
      );
    }
    return { row, contact };
  }

  /** Sends a fresh code (none in the sandbox), replacing any pending one. */
  async send(ctx: RequestContext, customerId: string, channel: ContactChannel): Promise<void> {
    const { row, contact } = await this.pendingContact(ctx, customerId, channel);
    const now = ctx.clock.now();
    const code = {
      id: newId("ContactVerificationCode"),
      sentTo: contact,
      ...issueCode("CONTACT_VERIFICATION", now),
      createdAt: now,
    };
    await this.services.data.execute(
      q
        .insertInto("ContactVerificationCode")
        .values({ ...code, platformId: ctx.platformId, customerId: row.id, channel })
        .onConflict((conflict) => conflict.columns(["customerId", "channel"]).doUpdateSet(code)),
    );
  }

  /** Checks the code; the right one makes the channel VERIFIED and answers the customer. */
  async confirm(
    ctx: RequestContext,
    customerId: string,
    channel: ContactChannel,
    input: { code: string },
  ): Promise<Customer> {
    const { row, contact } = await this.pendingContact(ctx, customerId, channel);
    const { noun, column, valueColumn } = CHANNELS[channel];
    const now = ctx.clock.now();
    const pending = await this.services.data.one(
      q
        .selectFrom("ContactVerificationCode")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", row.id)
        .where("channel", "=", channel),
    );
    if (!pending) throw noPendingCode(row, channel, `No ${noun} verification code is pending`);
    if (pending.sentTo !== contact) {
      throw noPendingCode(
        row,
        channel,
        `The pending code was sent to a ${noun} the customer no longer has`,
      );
    }
    await answerCode(this.services.data, {
      kind: "CONTACT_VERIFICATION",
      issued: pending,
      code: input.code,
      now,
      store: contactCodeStore(pending.id),
      unusable: () =>
        noPendingCode(
          row,
          channel,
          `The verification code sent at ${pending.createdAt.toISOString()} expired at ${pending.expiresAt.toISOString()}`,
        ),
      wrongDetails: { errors: [fieldError("body.code", "not the code sent")] },
    });

    const verified = await this.services.data.transaction(function* () {
      const consumed = yield* run(
        q.deleteFrom("ContactVerificationCode").where("id", "=", pending.id),
      );
      if (consumed === 0) return undefined;
      const updated = yield* one(
        q
          .updateTable("Customer")
          .set(
            column === "verifiedEmail"
              ? { verifiedEmail: contact, updatedAt: now }
              : { verifiedPhoneNumber: contact, updatedAt: now },
          )
          .where("id", "=", row.id)
          .where("platformId", "=", ctx.platformId)
          .where("deletedAt", "is", null)
          .where(valueColumn, "=", contact)
          .returningAll(),
      );
      // The customer changed (or was deleted) since it was read: keep the code.
      if (!updated) throw noPendingCode(row, channel, `The ${noun} of customer ${row.id} changed`);
      return updated;
    });
    if (!verified) {
      throw noPendingCode(row, channel, `The ${noun} verification code was already used`);
    }
    return toCustomer(verified);
  }
}
