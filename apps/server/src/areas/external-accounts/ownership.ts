import { randomBytes } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import { verifyWalletOwnership } from "@payments-sandbox/crypto";
import { found, one, q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { scheduleJob } from "../../jobs/schedule.js";
import { signatureChainOf } from "./account-info.js";
import {
  toExternalAccount,
  type ExternalAccount,
  type ExternalAccountRow,
  type ExternalAccountService,
  type Owner,
} from "./service.js";

// Proof that a FIRST_PARTY self-custody wallet is its owner's: a message the
// wallet signs (checked for real, per chain), or a liveness check that the
// sandbox passes by itself a little later.

type OwnershipChallenge = Schemas["OwnershipChallenge"];
type Method = Schemas["OwnershipVerificationMethod"];

/** How long a challenge can be answered (sandbox time). */
const CHALLENGE_TTL_SECONDS = 600;
/** When the sandbox's liveness check passes (sandbox time). */
export const LIVENESS_DELAY_SECONDS = 30;
const LIVENESS_JOB = "external-account-liveness";

interface StoredChallenge {
  method: Method;
  nonce: string;
  messageToSign?: string;
  expiresAt: string;
}

interface LivenessPayload {
  accountId: string;
  nonce: string;
}

const VERIFIABLE = new Set(["PENDING_OWNERSHIP_VERIFICATION", "UNVERIFIED"]);

function notApplicable(row: ExternalAccountRow): ApiError {
  return new ApiError(
    409,
    "INVALID_STATE_TRANSITION",
    `Ownership verification does not apply to ${row.id} (${row.ownershipType ?? "no ownershipType"}, ${row.accountType}, ${row.status})`,
  );
}

/** Moves an account to `status` (and its challenge), with the event when the status changes. */
function* moveTo(
  row: ExternalAccountRow,
  status: string,
  challenge: StoredChallenge | null,
  at: Date,
): SqlProgram<ExternalAccountRow> {
  const updated = yield* found(
    q
      .updateTable("ExternalAccount")
      .set({
        status,
        ownershipChallenge: challenge ? JSON.stringify(challenge) : null,
        updatedAt: at,
      })
      .where("id", "=", row.id)
      .where("platformId", "=", row.platformId)
      .where("deletedAt", "is", null)
      .returningAll(),
    `external account ${row.id}`,
  );
  if (row.status !== status) {
    yield* emitEvent({
      platformId: row.platformId,
      type: "EXTERNAL_ACCOUNT.STATUS_UPDATED",
      objectId: row.id,
      data: toExternalAccount(updated),
      at,
    });
  }
  return updated;
}

export class OwnershipVerification {
  constructor(
    private readonly services: Services,
    private readonly accounts: ExternalAccountService,
    private readonly apiBaseUrl: () => string,
  ) {}

  registerJobs(handlers: JobHandlers): void {
    handlers.register(LIVENESS_JOB, (job, tools) => this.passLiveness(job, tools));
  }

  async challenge(
    ctx: RequestContext,
    owner: Owner,
    id: string,
    method: Method,
  ): Promise<OwnershipChallenge> {
    const row = await this.accounts.ownedRow(ctx, owner, id);
    if (
      row.ownershipType !== "FIRST_PARTY" ||
      !signatureChainOf(row.accountType) ||
      !VERIFIABLE.has(row.status)
    ) {
      throw notApplicable(row);
    }
    const at = ctx.clock.now();
    const nonce = randomBytes(8).toString("hex");
    const expiresAt = new Date(at.getTime() + CHALLENGE_TTL_SECONDS * 1000).toISOString();
    const stored: StoredChallenge =
      method === "WALLET_SIGNATURE"
        ? {
            method,
            nonce,
            messageToSign: `Sandbox ownership check for ${row.id}. Nonce: ${nonce}. Expires: ${expiresAt}`,
            expiresAt,
          }
        : { method, nonce, expiresAt };
    const realNow = this.services.clock.now();
    await this.services.data.transaction(function* () {
      yield* moveTo(row, "PENDING_OWNERSHIP_VERIFICATION", stored, at);
      if (method === "LIVENESS") {
        const payload: LivenessPayload = { accountId: row.id, nonce };
        yield* scheduleJob({
          platformId: row.platformId,
          kind: LIVENESS_JOB,
          payload,
          delaySeconds: LIVENESS_DELAY_SECONDS,
          now: realNow,
        });
      }
    });
    return stored.method === "WALLET_SIGNATURE"
      ? { method: "WALLET_SIGNATURE", messageToSign: stored.messageToSign ?? "", expiresAt }
      : {
          method: "LIVENESS",
          verificationLink: `${this.apiBaseUrl()}/docs#tag/External-Accounts`,
          token: nonce,
          expiresAt,
        };
  }

  /** The wallet's signature of the outstanding message: ACTIVE, or UNVERIFIED and 400. */
  async verify(
    ctx: RequestContext,
    owner: Owner,
    id: string,
    signature: string,
  ): Promise<ExternalAccount> {
    const row = await this.accounts.ownedRow(ctx, owner, id);
    const stored = row.ownershipChallenge
      ? (JSON.parse(row.ownershipChallenge) as StoredChallenge)
      : undefined;
    const chain = signatureChainOf(row.accountType);
    if (stored?.method !== "WALLET_SIGNATURE" || stored.messageToSign === undefined || !chain) {
      throw new ApiError(
        409,
        "INVALID_STATE_TRANSITION",
        `No WALLET_SIGNATURE challenge is outstanding for ${row.id}`,
      );
    }
    const at = ctx.clock.now();
    const address = (JSON.parse(row.accountInfo) as { address: string }).address;
    const problem =
      at.getTime() > Date.parse(stored.expiresAt)
        ? "the challenge expired; start a new one"
        : verifyWalletOwnership(chain, address, stored.messageToSign, signature)
          ? undefined
          : `the signature is not ${address} signing messageToSign`;
    const updated = await this.services.data.transaction(() =>
      moveTo(row, problem ? "UNVERIFIED" : "ACTIVE", null, at),
    );
    if (problem) {
      throw new ApiError(400, "INVALID_INPUT", `Ownership not proven: ${problem}`, {
        reason: problem,
        details: { externalAccountId: row.id, status: "UNVERIFIED" },
      });
    }
    return toExternalAccount(updated);
  }

  /** The sandbox's liveness check passes, if the challenge it was started for is still the current one. */
  private async passLiveness(job: DueJob, tools: JobTools): Promise<void> {
    const { accountId, nonce } = job.payload as LivenessPayload;
    const at = tools.clock.now();
    await tools.data.transaction(function* () {
      const row = yield* one(
        q
          .selectFrom("ExternalAccount")
          .selectAll()
          .where("id", "=", accountId)
          .where("platformId", "=", job.platformId)
          .where("deletedAt", "is", null),
      );
      const stored = row?.ownershipChallenge
        ? (JSON.parse(row.ownershipChallenge) as StoredChallenge)
        : undefined;
      if (!row || stored?.method !== "LIVENESS" || stored.nonce !== nonce) return;
      yield* moveTo(row, "ACTIVE", null, at);
    });
  }
}
