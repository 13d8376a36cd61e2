// The one error type services throw; the error middleware turns it into the
// spec's Error object. Codes are the spec's, per status.
export interface ApiErrorBody {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  reason?: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  readonly reason: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: {
      details?: Record<string, unknown>;
      reason?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.reason = options.reason;
    this.headers = options.headers ?? {};
  }

  toBody(): ApiErrorBody {
    const body: ApiErrorBody = { status: this.status, code: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    if (this.reason !== undefined) body.reason = this.reason;
    return body;
  }
}

/** One field's failure, listed in `details.errors` (the live contract's FieldError). */
export interface FieldError {
  /** Dot path of the field within its part of the request (body, query, path, headers). */
  field: string;
  message: string;
}

/** A FieldError from where the value was: "body.personalInfo.email" names `personalInfo.email`. */
export function fieldError(location: string, message: string): FieldError {
  const field = location.replace(/^(body|query|path|params|headers)(\.|$)/, "");
  return { field: field === "" ? location : field, message };
}

/**
 * Causes the sandbox names in `reason` where production's code for the
 * status is more general (codes are production's; openapi.yaml documents
 * these strings).
 */
export const Reason = {
  insufficientBalance: "Insufficient balance",
  idempotencyKeyReused: "Idempotency-Key reused with different parameters",
  idempotencyInProgress: "Idempotency-Key request still in progress",
} as const;

export const invalidInput = (message: string, details?: Record<string, unknown>) =>
  new ApiError(400, "INVALID_INPUT", message, details ? { details } : {});

export const notFound = (code: string, message: string) => new ApiError(404, code, message);

export const isNotFound = (err: unknown): err is ApiError =>
  err instanceof ApiError && err.status === 404;

export const unauthorized = (message: string, reason?: string) =>
  new ApiError(401, "UNAUTHORIZED", message, reason ? { reason } : {});

const challenge = {
  "WWW-Authenticate":
    'Basic realm="payments-sandbox", charset="UTF-8", Bearer realm="payments-sandbox"',
};

/**
 * A request's credentials are not accepted (http/authenticator.ts, or a
 * platform deleted while its request ran, db/tenant.ts). Every such failure
 * names the check that failed in `reason`.
 */
export function rejected(message: string, reason: string): ApiError {
  return new ApiError(401, "UNAUTHORIZED", message, { headers: challenge, reason });
}
