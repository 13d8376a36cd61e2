/**
 * Strong customer authentication of a customer: its factors (factors.ts),
 * their enrolment and removal (enrolment.ts), SCA logins, the session they
 * open and failed-login lockout (login.ts), and 2FA resets (reset.ts). Every
 * operation first finds the customer (404 for another platform's or a
 * deleted one) and answers 409 `CONFLICT` when it does not use SCA
 * (requirement.ts); the parts then act for that customer.
 *
 * Factors: `SMS_OTP` is the customer's verified phone number (contact
 * verification) and needs no row; `TOTP` and `PASSKEY` are ScaFactor rows,
 * PENDING from the enrolment start (carrying its one-time-code state or its
 * WebAuthn challenge) until confirmed, then ACTIVE. One passkey per customer.
 * Codes (SMS, TOTP) are answered through code-challenge.ts like every other
 * one-time code of the sandbox.
 */
import type { Schemas } from "@payments-sandbox/client";
import type { RequestContext, Services } from "../../http/context.js";
import type { CustomerRow, CustomerService } from "../customers/service.js";
import { ScaEnrolment } from "./enrolment.js";
import { listFactors } from "./factors.js";
import { ScaLogin } from "./login.js";
import type { ScaPasskeys } from "./passkeys.js";
import { requiresSca, scaNotRequired } from "./requirement.js";
import { TwoFactorResets } from "./reset.js";

export class ScaService {
  private readonly enrolment: ScaEnrolment;
  private readonly login: ScaLogin;
  private readonly resets: TwoFactorResets;

  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    passkeys: ScaPasskeys,
  ) {
    this.enrolment = new ScaEnrolment(services, passkeys);
    this.login = new ScaLogin(services, passkeys);
    this.resets = new TwoFactorResets(services);
  }

  /** The customer, when it uses SCA: 404 for another platform's, 409 CONFLICT otherwise. */
  async scaCustomer(ctx: RequestContext, customerId: string): Promise<CustomerRow> {
    const row = await this.customers.getActiveRow(ctx, customerId);
    if (!requiresSca(row)) throw scaNotRequired(row);
    return row;
  }

  /** GET /sca/factors */
  async listFactors(ctx: RequestContext, customerId: string): Promise<Schemas["ScaFactorList"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return listFactors(this.services.data, ctx, row);
  }

  /** POST /sca/factors */
  async startEnrollment(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaFactorEnrollRequestOneOf"],
  ): Promise<Schemas["ScaFactorEnrollStartOneOf"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.enrolment.startEnrollment(ctx, row, input);
  }

  /** POST /sca/factors/confirm */
  async confirmEnrollment(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaFactorConfirmRequestOneOf"],
  ): Promise<Schemas["ScaFactorConfirmResponseOneOf"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.enrolment.confirmEnrollment(ctx, row, input);
  }

  /** DELETE /sca/factors/{credentialId} */
  async deleteFactor(ctx: RequestContext, customerId: string, credentialId: string) {
    const row = await this.scaCustomer(ctx, customerId);
    return this.enrolment.deleteFactor(ctx, row, credentialId);
  }

  /** POST /sca/login/start */
  async startLogin(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaLoginStartRequest"],
  ): Promise<Schemas["ScaLoginStart"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.login.startLogin(ctx, row, input);
  }

  /** POST /sca/login/complete */
  async completeLogin(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaLoginCompleteRequest"],
  ): Promise<Schemas["ScaLoginComplete"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.login.completeLogin(ctx, row, input);
  }

  /** POST /sca/record-event */
  async recordEvent(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["RecordSecurityEventRequest"],
  ): Promise<Schemas["RecordSecurityEventResponse"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.login.recordEvent(ctx, row, input);
  }

  /** POST /sca/factors/reset */
  async startReset(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["TwoFactorResetStartRequest"],
  ): Promise<Schemas["TwoFactorResetStart"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.resets.startReset(ctx, row, input);
  }

  /** GET /sca/factors/reset/{resetId} */
  async resetStatus(
    ctx: RequestContext,
    customerId: string,
    resetId: string,
  ): Promise<Schemas["TwoFactorResetStatus"]> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.resets.resetStatus(ctx, row, resetId);
  }

  /** POST /sca/factors/reset/{resetId}/complete */
  async completeReset(
    ctx: RequestContext,
    customerId: string,
    resetId: string,
    input: Schemas["TwoFactorResetCompleteRequest"] | undefined,
  ): Promise<void> {
    const row = await this.scaCustomer(ctx, customerId);
    return this.resets.completeReset(ctx, row, resetId, input);
  }
}
