import type { Schemas } from "@payments-sandbox/client";
import { sealSessionKeyBundle } from "../../crypto/bundles.js";
import { generateP256KeyPair } from "../../crypto/p256-keys.js";
import { found, one, q, run, type Row } from "../../db/query.js";
import { invalidInput, fieldError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { Activity } from "../../signing/activities.js";
import type { WalletHeaders } from "../../signing/headers.js";
import type { ChallengeBody, SignedRequests } from "../../signing/signed-requests.js";
import { requireClientPublicKey } from "../auth/sessions.js";
import type { InternalAccountService } from "./service.js";
import { toInternalAccount, type InternalAccount } from "./view.js";

export type WalletExport = Schemas["InternalAccountExportResponse"];
type AccountRow = Row<"InternalAccount">;

const accountRow = (own: { id: string; platformId: string }) =>
  q
    .selectFrom("InternalAccount")
    .selectAll()
    .where("id", "=", own.id)
    .where("platformId", "=", own.platformId);

/** Embedded-wallet actions authorised by the user's session key (signed retries). */
export class WalletService {
  constructor(
    private readonly services: Services,
    private readonly accounts: InternalAccountService,
    private readonly signing: SignedRequests,
  ) {}

  private async wallet(ctx: RequestContext, id: string): Promise<AccountRow> {
    const account = await this.accounts.getRow(ctx, id);
    if (account.type !== "EMBEDDED_WALLET") {
      throw invalidInput("Only EMBEDDED_WALLET accounts support this operation", {
        errors: [fieldError("path.id", "not an embedded wallet")],
      });
    }
    return account;
  }

  /** Signed retry: turns wallet privacy on or off; without `privateEnabled` nothing changes. */
  async setPrivacy(
    ctx: RequestContext,
    id: string,
    headers: WalletHeaders,
    privateEnabled: boolean | undefined,
  ): Promise<{ status: 202; body: ChallengeBody } | { status: 200; body: InternalAccount }> {
    const account = await this.wallet(ctx, id);
    const action = {
      activity: Activity.UPDATE_WALLET_PRIVACY,
      accountId: account.id,
      parameters: {
        accountId: account.id,
        ...(privateEnabled !== undefined ? { privateEnabled } : {}),
      },
    };
    const own = { id: account.id, platformId: ctx.platformId };
    const result = await this.signing.run(ctx, headers, action, () =>
      privateEnabled === undefined
        ? found(accountRow(own), `internal account ${account.id}`)
        : found(
            q
              .updateTable("InternalAccount")
              .set({ privacyEnabled: privateEnabled, updatedAt: ctx.clock.now() })
              .where("id", "=", own.id)
              .where("platformId", "=", own.platformId)
              .returningAll(),
            `internal account ${account.id}`,
          ),
    );
    if (result.kind === "CHALLENGE") return { status: 202, body: result.body };
    return { status: 200, body: toInternalAccount(result.value) };
  }

  /** Signed retry: the wallet key, sealed to `clientPublicKey`. */
  async export(
    ctx: RequestContext,
    id: string,
    headers: WalletHeaders,
    clientPublicKey: string,
  ): Promise<{ status: 202; body: ChallengeBody } | { status: 200; body: WalletExport }> {
    requireClientPublicKey(clientPublicKey);
    const account = await this.wallet(ctx, id);
    const action = {
      activity: Activity.EXPORT_WALLET,
      accountId: account.id,
      parameters: { accountId: account.id, clientPublicKey },
    };
    const result = await this.signing.run(ctx, headers, action, function* () {
      const own = q
        .updateTable("InternalAccount")
        .where("id", "=", account.id)
        .where("platformId", "=", ctx.platformId);
      // The wallet key is made on first export; the guard keeps one key per wallet.
      yield* run(
        own
          .set({ walletPrivateKey: generateP256KeyPair().privateKeyHex })
          .where("walletPrivateKey", "is", null),
      );
      const row = yield* one(
        q
          .selectFrom("InternalAccount")
          .select("walletPrivateKey")
          .where("id", "=", account.id)
          .where("platformId", "=", ctx.platformId),
      );
      if (!row?.walletPrivateKey) throw new Error(`wallet ${account.id} has no key`);
      return row.walletPrivateKey;
    });
    if (result.kind === "CHALLENGE") return { status: 202, body: result.body };
    return {
      status: 200,
      body: {
        id: account.id,
        encryptedWalletCredentials: sealSessionKeyBundle(result.value, clientPublicKey),
      },
    };
  }
}
