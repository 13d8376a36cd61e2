import type { Handlers } from "../../http/operations.js";
import type { InvitationService } from "./service.js";

export function invitationRoutes(
  invitations: InvitationService,
): Handlers<"createInvitation" | "getInvitation" | "claimInvitation" | "cancelInvitation"> {
  return {
    createInvitation: async ({ body }, ctx) => ({
      status: 201,
      body: await invitations.create(ctx, body),
    }),
    getInvitation: async ({ params }) => ({
      status: 200,
      body: await invitations.get(params.invitationCode),
    }),
    claimInvitation: async ({ params, body }) => ({
      status: 200,
      body: await invitations.claim(params.invitationCode, body),
    }),
    cancelInvitation: async ({ params }, ctx) => ({
      status: 200,
      body: await invitations.cancel(ctx, params.invitationCode),
    }),
  };
}
