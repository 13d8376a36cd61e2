/** UMA: the simulated parties on the sandbox UMA host, and whether a platform can invite. */
import type { InvitationConfigurationOutcome, UmaSandboxReceiverOutcome } from "../outcomes.js";
import type { MagicTable } from "../types.js";
import { SANDBOX_UMA_HOST, UMA_LOCAL_PART_MAX_LENGTH } from "../uma.js";

/**
 * The UMA domain a new sandbox platform starts with (the `umaDomain` column's default in the
 * server's schema). It is under `.localhost`, so nothing outside the machine can reach it.
 */
export const SANDBOX_DEFAULT_UMA_DOMAIN = "uma.sandbox.localhost";

/** The link of an invitation: on the inviting platform's UMA domain. */
export function invitationUrl(umaDomain: string, code: string): string {
  return `https://${umaDomain}/i/${code}`;
}

export const UMA_RECEIVER_TABLE: MagicTable<UmaSandboxReceiverOutcome> = {
  id: "umaReceiver",
  title: "UMA receivers and senders",
  description: `Simulated UMA parties on the sandbox UMA host \`${SANDBOX_UMA_HOST}\`. As receivers they decide quotes and payments to a UMA address; as senders they decide the simulated incoming payments of \`POST /sandbox/uma/receive\`.`,
  appliesTo:
    "quoting and paying a UMA address (the receiver), and `POST /sandbox/uma/receive` (the sender)",
  field: `the local part of a receiver UMA address on \`${SANDBOX_UMA_HOST}\``,
  key: { kind: "umaLocalPart" },
  rows: [
    {
      match: "$success.usd",
      outcome: {
        kind: "RECEIVER",
        currency: "USD",
        steps: [{ afterSeconds: 0, status: "COMPLETED" }],
      },
      description: "USD; payments to or from it succeed",
    },
    {
      match: "$success.eur",
      outcome: {
        kind: "RECEIVER",
        currency: "EUR",
        steps: [{ afterSeconds: 0, status: "COMPLETED" }],
      },
      description: "EUR; payments to or from it succeed",
    },
    {
      match: "$success.mxn",
      outcome: {
        kind: "RECEIVER",
        currency: "MXN",
        steps: [{ afterSeconds: 0, status: "COMPLETED" }],
      },
      description: "MXN; payments to or from it succeed",
    },
    {
      match: "$pending.long.usd",
      outcome: { kind: "RECEIVER", currency: "USD", steps: [] },
      description: "USD; payments to or from it stay pending (the sandbox never completes them)",
    },
    {
      match: "$fail.compliance.usd",
      outcome: {
        kind: "RECEIVER",
        currency: "USD",
        steps: [
          {
            afterSeconds: 0,
            status: "FAILED",
            failureReason: "COMPLIANCE_REJECTED",
            refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
          },
        ],
      },
      description:
        "USD; payments to or from it fail the compliance check: `FAILED` with `COMPLIANCE_REJECTED`; a payment to it refunds the source, a payment from it credits nothing",
    },
    {
      match: "$fail.lookup",
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "LOOKUP_REQUEST_FAILED",
        message: "The receiver's institution did not answer the lookup; try again later.",
      },
      description:
        "A receiver whose institution does not answer: looking it up, quoting to it and receiving from it are refused with 400 `LOOKUP_REQUEST_FAILED`",
    },
  ],
  other: {
    outcome: {
      kind: "REJECT",
      status: 404,
      errorCode: "UMA_NOT_FOUND",
      message: `No UMA receiver exists at this address on ${SANDBOX_UMA_HOST}.`,
    },
    description: "No such party: 404 `UMA_NOT_FOUND`",
  },
  examples: [
    `$success.usd@${SANDBOX_UMA_HOST}`,
    `$Pending.Long.USD@${SANDBOX_UMA_HOST.toUpperCase()}`,
    `$nobody@${SANDBOX_UMA_HOST}`,
  ],
  notes: [
    `A UMA address is \`$username@domain\`. It is well-formed when it has exactly one \`@\` and no surrounding spaces; the username holds one or more of \`a-z\`, \`0-9\`, \`-\`, \`_\`, \`.\`, \`+\`, and the part before \`@\` is at most ${UMA_LOCAL_PART_MAX_LENGTH} characters including the \`$\`; the domain is a host name (dot-separated labels of letters, digits and inner hyphens, no port). Addresses are case-insensitive.`,
    "A malformed address fails with 400 `INVALID_UMA_ADDRESS`, whatever its host.",
    `Addresses on other hosts are not magic values: the sandbox resolves them like any address (for example a user of your own platform), and answers 404 \`UMA_NOT_FOUND\` when no receiver exists.`,
    "A payment in another currency than the party's is refused with 400 `INVALID_CURRENCY`.",
  ],
};

export const INVITATION_CONFIGURATION_TABLE: MagicTable<InvitationConfigurationOutcome> = {
  id: "invitationConfiguration",
  title: "UMA invitations",
  description: `Whether the platform can create UMA invitations. An invitation's \`url\` is a link on the platform's UMA domain, so a platform still on the sandbox's placeholder domain \`${SANDBOX_DEFAULT_UMA_DOMAIN}\` (which nobody else can open) has not configured invitations; \`PATCH /config\` with your own \`umaDomain\` configures them.`,
  appliesTo: "`POST /invitations`",
  field: "the platform's `umaDomain` (`GET /config`)",
  key: { kind: "exact" },
  rows: [
    {
      match: SANDBOX_DEFAULT_UMA_DOMAIN,
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "INVITATIONS_NOT_CONFIGURED",
        message: `Invitations are not configured: the platform's umaDomain is still the sandbox placeholder ${SANDBOX_DEFAULT_UMA_DOMAIN}; set your own with PATCH /config.`,
      },
      description: "400 `INVITATIONS_NOT_CONFIGURED`",
    },
  ],
  other: {
    outcome: { kind: "CONFIGURED" },
    description: `The invitation is created, with \`url\` \`${invitationUrl("<umaDomain>", "<code>")}\``,
  },
  examples: [SANDBOX_DEFAULT_UMA_DOMAIN, "wallet.example.com"],
  notes: [
    "Getting and claiming an invitation need no configuration: any platform of the sandbox can read and claim an invitation by its `code` (it travels in a link), while only the platform that created it can cancel it (403 otherwise).",
    "`expiresAt` is read on the creating platform's sandbox clock: once it has passed, a `PENDING` invitation reads `EXPIRED` and can no longer be claimed or cancelled (400 `INVALID_INPUT`).",
  ],
};
