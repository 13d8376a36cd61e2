import type { Schemas } from "@payments-sandbox/client";
import { publicKeyToSpkiPem } from "@payments-sandbox/crypto";
import { publicKeyFromPrivateKey } from "../../crypto/p256-keys.js";
import { found, q } from "../../db/query.js";
import type { JobWorker } from "../../jobs/worker.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { generateCredentials, hashSecret, storeApiToken } from "../../platform/api-tokens.js";
import { firstPlatform } from "../../platform/bootstrap.js";
import { deletePlatformAndData } from "../../platform/teardown.js";
import { AUTH_RATE_LIMITS } from "../auth/rate-limits.js";
import { createPlatform } from "../platform/creation.js";
import { checkWebhookEndpoint } from "../webhooks/endpoint-url.js";

type CreateRequest = Schemas["SandboxPlatformCreateRequest"];
type Created = Schemas["SandboxPlatformCreated"];

const DEFAULT_NAME = "Isolated platform";

/**
 * Isolated platforms (POST and DELETE /sandbox/platforms): a fresh tenant
 * per test run, made by the same code path as the sandbox's own platform on
 * first start, so it has what that one has (keys, clock, accounts, a token
 * with every permission) and shares nothing.
 *
 * Who may create and delete them: the sandbox's own platform, with a token
 * that has MANAGE (http/permissions.ts). Whoever holds those credentials
 * owns the whole sandbox already; an isolated platform's token cannot make
 * more platforms or remove its neighbours, so a CI job handed only its own
 * platform's credentials stays inside it.
 */
export class SandboxPlatformService {
  constructor(
    private readonly services: Services,
    private readonly worker: JobWorker,
  ) {}

  private async requireSandboxOwnPlatform(ctx: RequestContext): Promise<string> {
    const own = await this.services.data.one(firstPlatform);
    if (own?.id !== ctx.platformId) {
      throw new ApiError(
        403,
        "FORBIDDEN",
        "Only the sandbox's own platform can create or delete platforms; use its credentials",
      );
    }
    return own.id;
  }

  async create(ctx: RequestContext, input: CreateRequest): Promise<Created> {
    await this.requireSandboxOwnPlatform(ctx);
    if (input.webhookEndpoint !== undefined) checkWebhookEndpoint(input.webhookEndpoint);
    const credentials = generateCredentials();
    // scrypt is slow on purpose; hashed before the transaction, as at first start.
    const hashed = await hashSecret(credentials.secret);
    // Real time, as for the first platform: a platform's clock starts at no offset.
    const clock = this.services.clock;
    const name = input.name ?? DEFAULT_NAME;
    const row = await this.services.data.transaction(function* (): SqlProgram<{
      id: string;
      webhookPrivateKey: string;
      createdAt: Date;
    }> {
      const id = yield* createPlatform(clock, name, {
        ...(input.webhookEndpoint !== undefined ? { webhookUrl: input.webhookEndpoint } : {}),
      });
      yield* storeApiToken(clock, id, credentials.tokenId, hashed);
      return yield* found(
        q
          .selectFrom("Platform")
          .select(["id", "webhookPrivateKey", "createdAt"])
          .where("id", "=", id),
        "platform",
      );
    });
    return {
      id: row.id,
      name,
      ...(input.webhookEndpoint !== undefined ? { webhookEndpoint: input.webhookEndpoint } : {}),
      createdAt: row.createdAt.toISOString(),
      clientId: credentials.tokenId,
      clientSecret: credentials.secret,
      webhookPublicKey: publicKeyToSpkiPem(publicKeyFromPrivateKey(row.webhookPrivateKey)),
    };
  }

  async delete(ctx: RequestContext, platformId: string): Promise<void> {
    const own = await this.requireSandboxOwnPlatform(ctx);
    if (platformId === own) {
      throw new ApiError(403, "FORBIDDEN", "The sandbox's own platform cannot be deleted");
    }
    // Its delayed outcomes first: none may start from here on, and one being
    // applied right now (by any process) is waited for, so that nothing it
    // writes lands after the platform is gone.
    await this.services.data.execute(
      q.deleteFrom("Job").where("platformId", "=", platformId).where("status", "=", "PENDING"),
    );
    await this.worker.settlePlatform(platformId);
    const deleted = await this.services.data.transaction(() =>
      deletePlatformAndData(platformId, Object.values(AUTH_RATE_LIMITS)),
    );
    if (!deleted) throw notFound("REFERENCE_NOT_FOUND", `No platform ${platformId}`);
  }
}
