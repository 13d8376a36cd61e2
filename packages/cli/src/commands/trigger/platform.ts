import type { Schemas } from "@payments-sandbox/client";
import { SANDBOX_DEFAULT_UMA_DOMAIN } from "@payments-sandbox/sandbox-rules";
import { CliError, ok } from "../../context.js";
import {
  advanceClock,
  approvedName,
  customerWithAccount,
  digits,
  individual,
  type Flow,
} from "./flow.js";

// Events about the platform's own set-up: a self-custody wallet proven to be
// its owner's, an invitation claimed, and the test event.

/** A valid Solana address (32 bytes in base58); a liveness check proves ownership, not a key. */
const SOLANA_ADDRESS = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

export const externalAccountLiveness: Flow = {
  summary:
    "a customer's own Solana wallet proven theirs by a liveness check, which passes 30 seconds later (advances the sandbox clock)",
  events: ["EXTERNAL_ACCOUNT.STATUS_UPDATED"],
  creates: {
    customer: "the wallet's owner: POST /customers",
    externalAccount: "the wallet: POST /customers/external-accounts",
  },
  async run(ctx) {
    const { api, out, overrides } = ctx;
    const { customer } = await customerWithAccount(ctx, individual(approvedName("Wallet Owner")));
    const body = overrides.apply<Schemas["ExternalAccountCreateRequest"]>("externalAccount", {
      customerId: customer.id,
      currency: "USDC",
      ownershipType: "FIRST_PARTY",
      accountInfo: { accountType: "SOLANA_WALLET", address: SOLANA_ADDRESS },
    });
    const wallet = ok(
      "POST /customers/external-accounts",
      await api.POST("/customers/external-accounts", { body }),
    );
    out.step(`• Wallet ${wallet.id}: ${wallet.status}`);
    const challenge = ok(
      "POST /customers/external-accounts/{externalAccountId}/challenge",
      await api.POST("/customers/external-accounts/{externalAccountId}/challenge", {
        params: { path: { externalAccountId: wallet.id } },
        body: { method: "LIVENESS" },
      }),
    );
    out.step(`• Liveness check started, until ${challenge.expiresAt}`);
    await advanceClock(ctx, 31, "until the liveness check passes");
    const after = ok(
      "GET /customers/external-accounts/{externalAccountId}",
      await api.GET("/customers/external-accounts/{externalAccountId}", {
        params: { path: { externalAccountId: wallet.id } },
      }),
    );
    out.step(`• Wallet ${after.id}: ${after.status}`);
    return {
      flow: "external-account-liveness",
      customerId: customer.id,
      externalAccountId: after.id,
      status: after.status,
    };
  },
};

export const invitationClaimed: Flow = {
  summary: `an invitation created by a customer and claimed (sets the platform's umaDomain to cli.sandbox.example while it is still ${SANDBOX_DEFAULT_UMA_DOMAIN})`,
  events: ["CUSTOMER.KYC_APPROVED", "INVITATION.CLAIMED"],
  creates: {
    customer: "the inviter: POST /customers",
    invitation: "the invitation: POST /invitations",
    claim: "the claim: POST /invitations/{invitationCode}/claim",
  },
  async run(ctx) {
    const { api, out, overrides } = ctx;
    const config = ok("GET /config", await api.GET("/config"));
    if (config.umaDomain === SANDBOX_DEFAULT_UMA_DOMAIN) {
      // Invitations are links on the platform's own UMA domain.
      ok(
        "PATCH /config",
        await api.PATCH("/config", { body: { umaDomain: "cli.sandbox.example" } }),
      );
      out.step("• Set the platform's umaDomain to cli.sandbox.example");
    }
    const { customer } = await customerWithAccount(ctx, individual(approvedName("Jane Inviter")));
    const invitation = ok(
      "POST /invitations",
      await api.POST("/invitations", {
        body: overrides.apply<Schemas["UmaInvitationCreateRequest"]>("invitation", {
          inviterUma: customer.umaAddress!,
        }),
      }),
    );
    out.step(`• Invitation ${invitation.code}: ${invitation.url}`);
    const claimed = ok(
      "POST /invitations/{invitationCode}/claim",
      await api.POST("/invitations/{invitationCode}/claim", {
        params: { path: { invitationCode: invitation.code } },
        body: overrides.apply<Schemas["UmaInvitationClaimRequest"]>("claim", {
          inviteeUma: `$invitee${digits(4)}@pay.example.org`,
        }),
      }),
    );
    out.step(`• Claimed by ${claimed.inviteeUma}: ${claimed.status}`);
    return { flow: "invitation-claimed", invitationCode: claimed.code, status: claimed.status };
  },
};

export const testWebhook: Flow = {
  summary: "the test event, sent at once to the platform's webhook endpoint (one must be set)",
  events: ["TEST"],
  creates: {},
  async run({ api, out }) {
    const sent = ok("POST /sandbox/webhooks/test", await api.POST("/sandbox/webhooks/test"));
    out.step(`• Sent TEST to ${sent.url}: it answered ${sent.response_status}`);
    if (sent.response_status >= 300) {
      throw new CliError(`the webhook endpoint answered ${sent.response_status}`);
    }
    return { flow: "test-webhook", url: sent.url, responseStatus: sent.response_status };
  },
};
