import { SANDBOX_VASPS } from "@payments-sandbox/sandbox-rules";
import type { Handlers } from "../../http/operations.js";
import { pageOfList } from "../../http/pagination.js";

// GET /vasps: the sandbox's fixed directory of virtual asset service
// providers (packages/sandbox-rules), in name order.

export function vaspRoutes(): Handlers<"listVasps"> {
  return {
    listVasps: ({ query }) =>
      Promise.resolve({
        status: 200,
        body: pageOfList(SANDBOX_VASPS, query.limit, query.cursor, (vasp) => ({ ...vasp })),
      }),
  };
}
