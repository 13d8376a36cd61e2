import type { Schemas } from "@sandbox/client";
import { publicKeyFromPrivateKey, publicKeyToSpkiPem } from "@sandbox/crypto";
import type { RequestContext, Services } from "../../http/context.js";

export type PlatformConfig = Schemas["PlatformConfig"];

/** The platform's configuration, with the public halves of its keys. */
export class PlatformService {
  constructor(private readonly services: Services) {}

  async getConfig(ctx: RequestContext): Promise<PlatformConfig> {
    const row = await this.services.db.platform.findUniqueOrThrow({
      where: { id: ctx.platformId },
    });
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
}
