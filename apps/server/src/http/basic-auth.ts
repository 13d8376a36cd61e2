import type { NextFunction, Request, Response } from "express";
import { ApiError } from "../errors.js";
import type { ApiTokenVerifier } from "../platform/api-tokens.js";
import type { Logger } from "../logger.js";
import type { PlatformClocks } from "../platform/platform-clock.js";

const challenge = { "WWW-Authenticate": 'Basic realm="payments-sandbox", charset="UTF-8"' };

function rejected(message: string): ApiError {
  return new ApiError(401, "UNAUTHORIZED", message, { headers: challenge });
}

/** BasicAuth `<api token id>:<api client secret>` on every API operation. */
export function basicAuth(verifier: ApiTokenVerifier, clocks: PlatformClocks, log: Logger) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.headers.authorization;
    if (!header)
      throw rejected(
        "Missing Authorization header: use HTTP Basic with your API token id and secret",
      );
    const [scheme, encoded] = header.split(" ", 2);
    if (scheme?.toLowerCase() !== "basic" || !encoded) {
      throw rejected("Unsupported authorization scheme: use HTTP Basic");
    }
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon <= 0) throw rejected("Malformed Basic credentials: expected <token id>:<secret>");
    const identity = await verifier.verify(decoded.slice(0, colon), decoded.slice(colon + 1));
    if (!identity) throw rejected("Invalid API token id or secret");
    res.locals.ctx = {
      platformId: identity.platformId,
      tokenId: identity.tokenId,
      clock: await clocks.forPlatform(identity.platformId),
      log: log.child({ traceId: res.locals.traceId, platformId: identity.platformId }),
    };
    next();
  };
}
