import type { Schemas } from "@sandbox/client";
import { kybOutcome } from "@sandbox/sandbox-rules";
import { invalidInput } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { emitEvent } from "../../events/outbox.js";
import { insert, q, run } from "../../db/query.js";
import { newId } from "../../ids.js";
import { toCustomer, type CustomerService } from "../customers/service.js";

export type Verification = Schemas["Verification"];
export type VerificationCreate = Schemas["VerificationCreate"];

/** KYB verification of business customers; the outcome is stored on the customer. */
export class VerificationService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  async create(ctx: RequestContext, input: VerificationCreate): Promise<Verification> {
    const customer = await this.customers.getRow(ctx, input.customerId);
    if (customer.customerType !== "BUSINESS") {
      throw invalidInput("KYB verification applies to BUSINESS customers only", {
        field: "customerId",
      });
    }
    const { registrationNumber } = JSON.parse(customer.businessInfo ?? "{}") as {
      registrationNumber?: string;
    };
    const { kybStatus } = kybOutcome(registrationNumber).outcome;
    const now = ctx.clock.now();
    const row = {
      id: newId("Verification"),
      platformId: ctx.platformId,
      customerId: customer.id,
      kybStatus,
      createdAt: now,
    };
    await this.services.data.transaction(function* () {
      yield* insert("Verification", row);
      // Only a real change is an event: the status is set, or differs from before.
      // (The outcome depends only on the registration number, so two verifications
      // running at once agree on it.)
      if (customer.kybStatus !== kybStatus) {
        yield* run(
          q
            .updateTable("Customer")
            .set({ kybStatus, updatedAt: now })
            .where("id", "=", customer.id)
            .where("platformId", "=", ctx.platformId),
        );
        yield* emitEvent({
          platformId: ctx.platformId,
          type: "CUSTOMER.KYB_STATUS_CHANGE",
          objectId: customer.id,
          data: toCustomer({ ...customer, kybStatus, updatedAt: now }),
          at: now,
        });
      }
    });
    return {
      id: row.id,
      customerId: row.customerId,
      kybStatus: row.kybStatus as Verification["kybStatus"],
      createdAt: row.createdAt.toISOString(),
    };
  }
}
