import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param, query, send } from "../../http/route-helpers.js";
import { walletHeaders } from "../../signing/headers.js";
import type {
  CreateAuthCredentialRequest,
  CredentialFilter,
  CredentialService,
} from "./credentials.js";
import type { LoginService, VerifyAuthCredentialRequest } from "./login.js";
import type { SessionFilter, SessionService } from "./sessions.js";

export function authRoutes(
  credentials: CredentialService,
  login: LoginService,
  sessions: SessionService,
): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/auth/credentials", async (req, res) => {
    const input = bodyOf<CreateAuthCredentialRequest>(req);
    send(res, await credentials.create(contextOf(res), walletHeaders(req), input));
  });
  router.get("/auth/credentials", async (req, res) => {
    res.json(await credentials.list(contextOf(res), query<CredentialFilter>(req)));
  });
  router.delete("/auth/credentials/:id", async (req, res) => {
    send(res, await credentials.remove(contextOf(res), param(req, "id"), walletHeaders(req)));
  });
  router.post("/auth/credentials/:id/challenge", async (req, res) => {
    const input = bodyOf<{ clientPublicKey?: string } | undefined>(req) ?? {};
    res.json(await login.challenge(contextOf(res), param(req, "id"), input));
  });
  router.post("/auth/credentials/:id/verify", async (req, res) => {
    const input = bodyOf<VerifyAuthCredentialRequest>(req);
    send(res, await login.verify(contextOf(res), param(req, "id"), walletHeaders(req), input));
  });
  router.get("/auth/sessions", async (req, res) => {
    res.json(await sessions.list(contextOf(res), query<SessionFilter>(req)));
  });
  router.post("/auth/sessions/:id/refresh", async (req, res) => {
    const { clientPublicKey } = bodyOf<{ clientPublicKey: string }>(req);
    send(
      res,
      await sessions.refresh(contextOf(res), param(req, "id"), walletHeaders(req), clientPublicKey),
    );
  });
  router.delete("/auth/sessions/:id", async (req, res) => {
    send(res, await sessions.revoke(contextOf(res), param(req, "id"), walletHeaders(req)));
  });
  return router;
}
