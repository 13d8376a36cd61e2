// How a wallet flow fails: the API refused a request (SandboxApiError, with
// the API's error body), or answered other than the flow expects at that
// step (WalletFlowError).

/** The error body every refused request carries. */
export interface ApiErrorBody {
  status: number;
  code: string;
  message: string;
  reason?: string;
  details?: Record<string, unknown>;
}

/** The API refused a request of a wallet flow: `status`, `code` and `reason` say why. */
export class SandboxApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly reason: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** Seconds to wait before trying again, on 429. */
  readonly retryAfter: number | undefined;

  constructor(response: Response, body: unknown) {
    const error = asErrorBody(body, response.status);
    super(
      `${error.status} ${error.code}: ${error.message}${error.reason ? ` (${error.reason})` : ""}`,
    );
    this.name = "SandboxApiError";
    this.status = error.status;
    this.code = error.code;
    this.reason = error.reason;
    this.details = error.details;
    const retryAfter = Number(response.headers.get("Retry-After") ?? Number.NaN);
    this.retryAfter = Number.isFinite(retryAfter) ? retryAfter : undefined;
  }
}

/**
 * The API answered, but not as the flow expects at this step (a credential of
 * another type, a signed retry that asks for yet another signature, an OTP
 * bundle not signed by the published enclave key).
 */
export class WalletFlowError extends Error {
  /** The step of the flow that went wrong, e.g. `otp-challenge`. */
  readonly step: string;

  constructor(step: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "WalletFlowError";
    this.step = step;
  }
}

function asErrorBody(body: unknown, status: number): ApiErrorBody {
  const b = (typeof body === "object" && body !== null ? body : {}) as Partial<ApiErrorBody>;
  return {
    status: typeof b.status === "number" ? b.status : status,
    code: typeof b.code === "string" ? b.code : "UNEXPECTED_RESPONSE",
    message: typeof b.message === "string" ? b.message : `HTTP ${status}`,
    ...(typeof b.reason === "string" ? { reason: b.reason } : {}),
    ...(typeof b.details === "object" && b.details !== null ? { details: b.details } : {}),
  };
}

/** What every call of the typed client answers. */
export interface ApiResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful call; a refused one throws SandboxApiError. */
export function ok<T>(result: ApiResult<T>): T {
  if (!result.response.ok) throw new SandboxApiError(result.response, result.error);
  return result.data as T;
}
