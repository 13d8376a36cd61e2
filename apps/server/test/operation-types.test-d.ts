// The handler contract, checked by the compiler (`tsc -p tsconfig.test.json`):
// each `@ts-expect-error` below must be an error, or the check fails. Nothing
// here runs.
import type { Schemas } from "@payments-sandbox/client";
import type { RequestContext } from "../src/http/context.js";
import type { IdempotencyStore } from "../src/http/idempotency.js";
import type { Input, OperationId, Query, Reply } from "../src/http/operation-types.js";
import {
  idempotent,
  type ApiHandlers,
  type Handler,
  type Handlers,
} from "../src/http/operations.js";

declare const ctx: RequestContext;
declare const store: IdempotencyStore;
declare const customer: Schemas["Customer"];
declare const handlers: ApiHandlers;

// An area's table names its operations: a handler for each, and nothing else.
export const complete: Handlers<"getCustomerById"> = {
  getCustomerById: () => ({ status: 200, body: customer }),
};

// @ts-expect-error a named operation without its handler
export const missing: Handlers<"getCustomerById" | "listCustomers"> = {
  getCustomerById: () => ({ status: 200, body: customer }),
};

export const misspelt: Handlers<"getCustomerById"> = {
  getCustomerById: () => ({ status: 200, body: customer }),
  // @ts-expect-error an operation the table does not name
  getCustomers: () => ({ status: 200, body: customer }),
};

// @ts-expect-error not an operationId of openapi.yaml
export type Unknown = Handlers<"getCustomers">;

// The whole API: leaving one operation out does not compile.
const { getCustomerById: _left, ...rest } = handlers;
// @ts-expect-error getCustomerById is missing
export const incomplete: ApiHandlers = rest;

// Webhooks are in the generated `operations` but are not served.
// @ts-expect-error a webhook, not a path operation
export const webhook: OperationId = "testWebhook";
// @ts-expect-error served by app.ts outside the versioned API
export const health: OperationId = "getSandboxHealth";

// Input comes typed from the spec: path parameters, query, headers, body.
export const typedInput: Handler<"getCustomerById"> = ({ params }) => {
  const id: string = params.customerId;
  // @ts-expect-error getCustomer has no `id` path parameter
  void params.id;
  return { status: 200, body: { ...customer, id } };
};

export function queryHasItsDefault(query: Query<"listCustomers">): number {
  // The validator fills `limit` from its default: always a number.
  return query.limit;
}

export function bodyIsTheSchema(
  input: Input<"createCustomer">,
): Schemas["CustomerCreateRequestOneOf"] {
  return input.body;
}

export function optionalBodyMayBeAbsent(input: Input<"challengeAuthCredential">) {
  // @ts-expect-error the request body of this operation is optional
  return input.body.clientPublicKey;
}

export function declaredHeadersOnly(
  transfer: Input<"createTransferIn">,
  create: Input<"createCustomer">,
): string | undefined {
  // @ts-expect-error createCustomer declares no Idempotency-Key
  void create.headers["Idempotency-Key"];
  return transfer.headers["Idempotency-Key"];
}

// Replies are the documented success responses, with their bodies.
export const created: Reply<"createCustomer"> = { status: 201, body: customer };
// @ts-expect-error createCustomer answers 201, not 200
export const wrongStatus: Reply<"createCustomer"> = { status: 200, body: customer };
// @ts-expect-error the body must be a Customer
export const wrongBody: Reply<"createCustomer"> = { status: 201, body: { id: "x" } };
export const noContent: Reply<"revokeAuthSession"> = { status: 204 };
// @ts-expect-error a 204 has no body
export const bodyOn204: Reply<"revokeAuthSession"> = { status: 204, body: {} };

// Only an operation that declares Idempotency-Key can be made idempotent.
export const transferIn: Handlers<"createTransferIn"> = {
  createTransferIn: idempotent(store, async () => {
    throw new Error("not run");
  }),
};
export const notIdempotent: Handlers<"createCustomer"> = {
  // @ts-expect-error createCustomer declares no Idempotency-Key
  createCustomer: idempotent(store, async () => ({ status: 201 as const, body: customer })),
};

// An operation without security has no caller: its handler cannot scope by a platform.
declare const redeemed: Schemas["AgentDeviceCodeRedeemResponse"];
export const open: Handler<"redeemAgentDeviceCode"> = (_input, publicCtx) => {
  // @ts-expect-error a PublicContext has no platform
  void publicCtx.platformId;
  publicCtx.log.info("redeemed");
  return { status: 200, body: redeemed };
};
export const scoped: Handler<"getCustomerById"> = (_input, caller) => ({
  status: 200,
  body: { ...customer, id: caller.platformId },
});

void ctx;
