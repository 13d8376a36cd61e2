import type { IdempotencyStore } from "../../http/idempotency.js";
import { idempotent, type Handlers } from "../../http/operations.js";
import { walletHeaders } from "../../signing/headers.js";
import type { BulkCustomerImport } from "./bulk-import.js";
import type { ContactVerificationService } from "./contact-verification.js";
import type { KycLinkService } from "./kyc-links.js";
import type { CustomerService } from "./service.js";

export function customerRoutes(
  customers: CustomerService,
  bulk: BulkCustomerImport,
): Handlers<
  | "createCustomer"
  | "listCustomers"
  | "getCustomerById"
  | "updateCustomerById"
  | "deleteCustomerById"
  | "getEndUserTerms"
  | "uploadCustomersCsv"
  | "getBulkCustomerImportJob"
> {
  return {
    createCustomer: async ({ body }, ctx) => ({
      status: 201,
      body: await customers.create(ctx, body),
    }),
    listCustomers: async ({ query }, ctx) => ({
      status: 200,
      body: await customers.list(ctx, query),
    }),
    getCustomerById: async ({ params }, ctx) => ({
      status: 200,
      body: await customers.get(ctx, params.customerId),
    }),
    updateCustomerById: ({ params, headers, body }, ctx) =>
      customers.update(ctx, params.customerId, walletHeaders(headers), body),
    deleteCustomerById: async ({ params }, ctx) => ({
      status: 200,
      body: await customers.delete(ctx, params.customerId),
    }),
    getEndUserTerms: () => Promise.resolve({ status: 200, body: customers.endUserTerms() }),
    uploadCustomersCsv: async ({ body }, ctx) => ({
      status: 202,
      body: await bulk.upload(ctx, body.file),
    }),
    getBulkCustomerImportJob: async ({ params }, ctx) => ({
      status: 200,
      body: await bulk.get(ctx, params.jobId),
    }),
  };
}

export function contactVerificationRoutes(
  verification: ContactVerificationService,
): Handlers<
  | "sendCustomerEmailVerification"
  | "confirmCustomerEmailVerification"
  | "sendCustomerPhoneVerification"
  | "confirmCustomerPhoneVerification"
> {
  return {
    sendCustomerEmailVerification: async ({ params }, ctx) => {
      await verification.send(ctx, params.customerId, "EMAIL");
      return { status: 204 };
    },
    confirmCustomerEmailVerification: async ({ params, body }, ctx) => ({
      status: 200,
      body: await verification.confirm(ctx, params.customerId, "EMAIL", body),
    }),
    sendCustomerPhoneVerification: async ({ params }, ctx) => {
      await verification.send(ctx, params.customerId, "PHONE");
      return { status: 204 };
    },
    confirmCustomerPhoneVerification: async ({ params, body }, ctx) => ({
      status: 200,
      body: await verification.confirm(ctx, params.customerId, "PHONE", body),
    }),
  };
}

export function kycLinkRoutes(
  links: KycLinkService,
  idempotency: IdempotencyStore,
): Handlers<"createCustomerKycLink"> {
  return {
    createCustomerKycLink: idempotent(idempotency, async ({ params, body }, ctx) => ({
      status: 201,
      body: await links.create(ctx, params.customerId, body?.redirectUri),
    })),
  };
}
