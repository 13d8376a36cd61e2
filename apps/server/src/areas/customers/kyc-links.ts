import type { Schemas } from "@payments-sandbox/client";
import {
  KYC_LINK_SECONDS,
  individualKycOutcome,
  kybOutcome,
} from "@payments-sandbox/sandbox-rules";
import { insert, one, q, run } from "../../db/query.js";
import { ApiError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { linkDigest, newLinkToken } from "../../http/link-tokens.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import { contactVerificationOf } from "./contact-channels.js";
import { emitStatusEvent, type CustomerService } from "./service.js";

// Hosted KYC/KYB links (POST /customers/{customerId}/kyc-link). The link opens
// a sandbox page (kyc-page.ts) where the customer "verifies" by entering one
// value, the magic value of the customer's table: a full name for KYC, a
// registration number for KYB. Submitting it sets kycStatus or kybStatus and
// announces the change like any other; the link then cannot be used again.

export type KycLinkResponse = Schemas["KycLinkResponse"];

/** Where the hosted pages are served, outside the versioned API. */
export const KYC_LINK_PATH = "/kyc-link";

export type KycLinkPage =
  | { kind: "FORM"; customerType: "INDIVIDUAL" | "BUSINESS" }
  | { kind: "GONE" }
  | { kind: "UNKNOWN" };

export type KycLinkSubmission =
  | {
      kind: "DONE";
      customerType: "INDIVIDUAL" | "BUSINESS";
      status: string;
      redirectUri: string | null;
    }
  | { kind: "GONE" }
  | { kind: "UNKNOWN" };

export class KycLinkService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    private readonly clocks: PlatformClocks,
    /** The sandbox's own origin, for the link's URL. */
    private readonly origin: () => string,
  ) {}

  async create(
    ctx: RequestContext,
    customerId: string,
    redirectUri: string | undefined,
  ): Promise<KycLinkResponse> {
    const customer = await this.customers.getActiveRow(ctx, customerId);
    // The provider verifies identity only once the contact details it
    // requires are confirmed (an EEA customer's email and phone).
    const contacts = contactVerificationOf(customer);
    if (contacts && Object.values(contacts).some((status) => status !== "VERIFIED")) {
      throw new ApiError(
        409,
        "CONFLICT",
        "Confirm the customer's email address and phone number first (POST /customers/{customerId}/verify-email and verify-phone)",
        { details: { contactVerification: contacts } },
      );
    }
    const { token, digest } = newLinkToken();
    const now = ctx.clock.now();
    const expiresAt = new Date(now.getTime() + KYC_LINK_SECONDS * 1000);
    await this.services.data.transaction(() =>
      insert("KycLink", {
        id: digest,
        platformId: ctx.platformId,
        customerId: customer.id,
        redirectUri: redirectUri ?? null,
        expiresAt,
        usedAt: null,
        createdAt: now,
      }),
    );
    return {
      kycUrl: `${this.origin()}${KYC_LINK_PATH}/${token}`,
      expiresAt: expiresAt.toISOString(),
      provider: "SUMSUB",
    };
  }

  /** What the page shows: the form while the link can be used. */
  async open(token: string): Promise<KycLinkPage> {
    const link = await this.usable(token);
    if (link.kind !== "USABLE") return link;
    return { kind: "FORM", customerType: link.customerType };
  }

  /** The customer's answer on the page: decides the status, once. */
  async submit(token: string, value: string): Promise<KycLinkSubmission> {
    const link = await this.usable(token);
    if (link.kind !== "USABLE") return link;
    const { row, customerType, now } = link;
    const column = customerType === "BUSINESS" ? "kybStatus" : "kycStatus";
    const status =
      customerType === "BUSINESS"
        ? kybOutcome(value).outcome.kybStatus
        : individualKycOutcome(value).outcome.kycStatus;
    const ctx = { platformId: row.platformId };
    const done = await this.services.data.transaction(function* () {
      // Single use: only one submission wins this conditional update.
      const claimed = yield* run(
        q
          .updateTable("KycLink")
          .set({ usedAt: now })
          .where("id", "=", row.id)
          .where("usedAt", "is", null)
          .where("expiresAt", ">", now),
      );
      if (claimed !== 1) return false;
      const customer = yield* one(
        q
          .updateTable("Customer")
          .set({ [column]: status, updatedAt: now })
          .where("id", "=", row.customerId)
          .where("platformId", "=", row.platformId)
          .returningAll(),
      );
      if (customer) yield* emitStatusEvent(ctx, customer);
      return true;
    });
    if (!done) return { kind: "GONE" };
    return { kind: "DONE", customerType, status, redirectUri: row.redirectUri };
  }

  /** The link behind a token, if it can still be used, with its customer's type. */
  private async usable(token: string) {
    const digest = linkDigest(token);
    if (digest === undefined) return { kind: "UNKNOWN" } as const;
    const db = this.services.data;
    const row = await db.one(q.selectFrom("KycLink").selectAll().where("id", "=", digest));
    if (!row) return { kind: "UNKNOWN" } as const;
    const now = (await this.clocks.forPlatform(row.platformId)).now();
    if (row.usedAt !== null || row.expiresAt <= now) return { kind: "GONE" } as const;
    const customer = await db.one(
      q
        .selectFrom("Customer")
        .select(["customerType", "deletedAt"])
        .where("id", "=", row.customerId)
        .where("platformId", "=", row.platformId),
    );
    if (!customer || customer.deletedAt !== null) return { kind: "GONE" } as const;
    const customerType = customer.customerType === "BUSINESS" ? "BUSINESS" : "INDIVIDUAL";
    return { kind: "USABLE", row, customerType, now } as const;
  }
}
