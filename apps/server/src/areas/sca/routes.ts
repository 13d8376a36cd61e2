import type { Handlers } from "../../http/operations.js";
import type { BeneficiaryTrustService } from "./beneficiary-trust.js";
import type { ScaService } from "./service.js";

export function scaRoutes(
  sca: ScaService,
  trust: BeneficiaryTrustService,
): Handlers<
  | "listScaFactors"
  | "startScaFactorEnrollment"
  | "confirmScaFactorEnrollment"
  | "deleteScaFactor"
  | "startScaLogin"
  | "completeScaLogin"
  | "recordSecurityEvent"
  | "startTwoFactorReset"
  | "getTwoFactorResetStatus"
  | "completeTwoFactorReset"
  | "startBeneficiaryTrust"
  | "confirmBeneficiaryTrust"
  | "startBeneficiaryUntrust"
  | "confirmBeneficiaryUntrust"
> {
  return {
    listScaFactors: async ({ query }, ctx) => ({
      status: 200,
      body: await sca.listFactors(ctx, query.customerId),
    }),
    startScaFactorEnrollment: async ({ query, body }, ctx) => ({
      status: 200,
      body: await sca.startEnrollment(ctx, query.customerId, body),
    }),
    confirmScaFactorEnrollment: async ({ query, body }, ctx) => ({
      status: 200,
      body: await sca.confirmEnrollment(ctx, query.customerId, body),
    }),
    deleteScaFactor: async ({ query, params }, ctx) => {
      await sca.deleteFactor(ctx, query.customerId, params.credentialId);
      return { status: 204 };
    },
    startScaLogin: async ({ query, body }, ctx) => ({
      status: 200,
      body: await sca.startLogin(ctx, query.customerId, body),
    }),
    completeScaLogin: async ({ query, body }, ctx) => ({
      status: 200,
      body: await sca.completeLogin(ctx, query.customerId, body),
    }),
    recordSecurityEvent: async ({ query, body }, ctx) => ({
      status: 200,
      body: await sca.recordEvent(ctx, query.customerId, body),
    }),
    startTwoFactorReset: async ({ query, body }, ctx) => ({
      status: 201,
      body: await sca.startReset(ctx, query.customerId, body),
    }),
    getTwoFactorResetStatus: async ({ query, params }, ctx) => ({
      status: 200,
      body: await sca.resetStatus(ctx, query.customerId, params.resetId),
    }),
    completeTwoFactorReset: async ({ query, params, body }, ctx) => {
      await sca.completeReset(ctx, query.customerId, params.resetId, body);
      return { status: 204 };
    },
    startBeneficiaryTrust: async ({ params }, ctx) => ({
      status: 200,
      body: await trust.start(ctx, params.externalAccountId, "TRUST"),
    }),
    confirmBeneficiaryTrust: async ({ params, body }, ctx) => ({
      status: 200,
      body: await trust.confirm(ctx, params.externalAccountId, "TRUST", body),
    }),
    startBeneficiaryUntrust: async ({ params }, ctx) => ({
      status: 200,
      body: await trust.start(ctx, params.externalAccountId, "UNTRUST"),
    }),
    confirmBeneficiaryUntrust: async ({ params, body }, ctx) => ({
      status: 200,
      body: await trust.confirm(ctx, params.externalAccountId, "UNTRUST", body),
    }),
  };
}
