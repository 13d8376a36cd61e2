import type { Schemas } from "@sandbox/client";
import { publicKeyToSpkiPem } from "@sandbox/crypto";
import { publicKeyFromPrivateKey } from "../../crypto/p256-keys.js";
import { one, q, type Row } from "../../db/query.js";
import { invalidInput, fieldError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";

export type PlatformConfig = Schemas["PlatformConfig"];
export type PlatformConfigUpdate = Schemas["PlatformConfigUpdate"];

// Public keys are derived from the stored private keys on every read; the
// private halves never leave this module.
type PlatformRow = Row<"Platform">;

function toPlatformConfig(row: PlatformRow): PlatformConfig {
  return {
    id: row.id,
    name: row.name,
    webhookUrl: row.webhookUrl,
    webhookPublicKey: publicKeyToSpkiPem(publicKeyFromPrivateKey(row.webhookPrivateKey)),
    otpEnclavePublicKey: publicKeyFromPrivateKey(row.otpSigningPrivateKey, false),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Only http(s) endpoints can receive a POST; the schema's `uri` allows any scheme. */
function checkWebhookUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidInput("webhookUrl is not a URL", {
      errors: [fieldError("body.webhookUrl", "not a URL")],
    });
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw invalidInput("webhookUrl must be an http or https URL", {
      errors: [fieldError("body.webhookUrl", "scheme must be http or https")],
    });
  }
}

export class PlatformService {
  constructor(private readonly services: Services) {}

  async get(ctx: RequestContext): Promise<PlatformConfig> {
    // Every API token belongs to a platform, so the row exists.
    const row = await this.services.data.one(
      q.selectFrom("Platform").selectAll().where("id", "=", ctx.platformId),
    );
    if (!row) throw new Error(`platform ${ctx.platformId} of an API token does not exist`);
    return toPlatformConfig(row);
  }

  /**
   * Sets the name and/or webhook URL. Events recorded while no URL was set
   * are waiting (PENDING); setting one lets the dispatcher deliver them.
   */
  async update(ctx: RequestContext, input: PlatformConfigUpdate): Promise<PlatformConfig> {
    if (typeof input.webhookUrl === "string") checkWebhookUrl(input.webhookUrl);
    const row = await this.services.data.transaction(() =>
      one(
        q
          .updateTable("Platform")
          .set({
            ...(input.name !== undefined ? { name: input.name } : {}),
            ...(input.webhookUrl !== undefined ? { webhookUrl: input.webhookUrl } : {}),
            updatedAt: ctx.clock.now(),
          })
          .where("id", "=", ctx.platformId)
          .returningAll(),
      ),
    );
    if (!row) throw new Error(`platform ${ctx.platformId} of an API token does not exist`);
    return toPlatformConfig(row);
  }
}
