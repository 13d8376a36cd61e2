import type { operations, paths } from "@payments-sandbox/client";

// What a handler receives and returns, derived from the generated
// `operations` of openapi.yaml: an operation's path parameters, query,
// headers and JSON body in, one of its documented success responses out.
// Nothing here is written by hand that the spec already says.

type Method = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace";

/** The operations under openapi.yaml's `paths` (`operations` also holds the webhooks'). */
type PathOperation = { [P in keyof paths]: NonNullable<paths[P][Method]> }[keyof paths];

export type PathOperationId = {
  [Id in keyof operations]: operations[Id] extends PathOperation ? Id : never;
}[keyof operations];

/**
 * Operations served by app.ts outside the versioned API rather than by an
 * operation handler: their paths in openapi.yaml carry their own `servers`
 * (GET /healthz sits at the origin, for load balancers and orchestrators).
 */
export const OUTSIDE_VERSIONED_API = ["getSandboxHealth"] as const satisfies PathOperationId[];

/** Every operation the dispatcher serves: each needs exactly one handler. */
export type OperationId = Exclude<PathOperationId, (typeof OUTSIDE_VERSIONED_API)[number]>;

/**
 * Operations of the versioned API whose `security` is empty: no credentials
 * are read, and their handlers get a PublicContext, with no platform (a test,
 * and app.ts at start-up, keep this list equal to the spec's).
 */
export const PUBLIC_OPERATIONS = ["redeemAgentDeviceCode"] as const satisfies OperationId[];

export type PublicOperationId = (typeof PUBLIC_OPERATIONS)[number];

type ParametersOf<Op extends OperationId> = operations[Op]["parameters"];

/** A parameter group the operation does not declare is an empty object. */
type Group<T> = [NonNullable<T>] extends [never] ? Record<never, never> : NonNullable<T>;

type KeysOf<T> = [NonNullable<T>] extends [never] ? never : keyof NonNullable<T>;

/**
 * Query parameters that openapi.yaml gives a `default`: the validator fills
 * it in, so a handler always sees a value (a test keeps this list equal to
 * the spec's).
 */
export const DEFAULTED_QUERY_PARAMETERS = ["limit", "sortOrder", "sendingAmount"] as const;

type WithDefaults<Q> = Q & {
  [K in keyof Q & (typeof DEFAULTED_QUERY_PARAMETERS)[number]]-?: NonNullable<Q[K]>;
};

/** The operation's query, as validated: coerced, with defaults applied. */
export type Query<Op extends OperationId> = WithDefaults<Group<ParametersOf<Op>["query"]>>;

export type PathParams<Op extends OperationId> = Group<ParametersOf<Op>["path"]>;

export type RequestHeaders<Op extends OperationId> = Group<ParametersOf<Op>["header"]>;

/** Every request header a path operation declares, by its name in openapi.yaml. */
export type RequestHeaderName = {
  [Op in OperationId]: KeysOf<ParametersOf<Op>["header"]>;
}[OperationId];

/** A JSON body, or a multipart one (whose file parts arrive as their text: see operations.ts). */
type JsonOf<T> = T extends { content: { "application/json": infer B } }
  ? B
  : T extends { content: { "multipart/form-data": infer M } }
    ? M
    : never;

/** The JSON request body; `undefined` where it is optional or the operation has none. */
export type Body<Op extends OperationId> = undefined extends operations[Op]["requestBody"]
  ? JsonOf<NonNullable<operations[Op]["requestBody"]>> | undefined
  : JsonOf<operations[Op]["requestBody"]>;

/** Everything a handler gets from the request, as the validator checked it. */
export interface Input<Op extends OperationId> {
  params: PathParams<Op>;
  query: Query<Op>;
  headers: RequestHeaders<Op>;
  body: Body<Op>;
  /**
   * The file name each file part of a multipart body came with, by part
   * (the part's value in `body` is the file itself).
   */
  fileNames: Readonly<Record<string, string>>;
}

type SuccessCode = 200 | 201 | 202 | 203 | 204 | 205 | 206;

type Responses<Op extends OperationId> = operations[Op]["responses"];

/** The success statuses openapi.yaml documents for the operation. */
export type SuccessStatus<Op extends OperationId> = Extract<keyof Responses<Op>, SuccessCode>;

/**
 * One of the operation's documented success responses: its status and JSON
 * body, or no body where the spec gives none (204). Errors are thrown as
 * ApiError and written by the error handler.
 */
export type Reply<Op extends OperationId> = {
  [S in SuccessStatus<Op>]: Responses<Op>[S] extends { content: { "application/json": infer B } }
    ? { status: S; body: B }
    : { status: S; body?: undefined };
}[SuccessStatus<Op>];

/** Operations that declare `Idempotency-Key`. */
export type IdempotentOperationId = {
  [Op in OperationId]: "Idempotency-Key" extends KeysOf<ParametersOf<Op>["header"]> ? Op : never;
}[OperationId];
