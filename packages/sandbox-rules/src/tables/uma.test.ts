import { describe, expect, it } from "vitest";
import { evaluateUmaReceiver, invitationConfigurationOutcome } from "../evaluate.js";
import { SANDBOX_DEFAULT_UMA_DOMAIN } from "./uma.js";

describe("UMA receivers", () => {
  it.each([
    ["$success.usd@sandbox.uma.money", "USD", [{ afterSeconds: 0, status: "COMPLETED" }]],
    ["$success.eur@sandbox.uma.money", "EUR", [{ afterSeconds: 0, status: "COMPLETED" }]],
    ["$SUCCESS.MXN@Sandbox.Uma.Money", "MXN", [{ afterSeconds: 0, status: "COMPLETED" }]],
    ["$pending.long.usd@sandbox.uma.money", "USD", []],
    [
      "$fail.compliance.usd@sandbox.uma.money",
      "USD",
      [
        {
          afterSeconds: 0,
          status: "FAILED",
          failureReason: "COMPLIANCE_REJECTED",
          refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
        },
      ],
    ],
  ])("%j → %s", (address, currency, steps) => {
    const result = evaluateUmaReceiver(address);
    expect(result.outcome).toEqual({ kind: "RECEIVER", currency, steps });
    expect(result.matched).toBe(result.address?.localPart);
  });

  it("answers 404 UMA_NOT_FOUND for any other well-formed address on the sandbox host", () => {
    for (const address of [
      "$nobody@sandbox.uma.money",
      "$success.gbp@sandbox.uma.money",
      "$success@sandbox.uma.money",
    ]) {
      const result = evaluateUmaReceiver(address);
      expect(result.outcome).toMatchObject({
        kind: "REJECT",
        status: 404,
        errorCode: "UMA_NOT_FOUND",
      });
      expect(result.matched).toBeNull();
      expect(result.address?.domain).toBe("sandbox.uma.money");
    }
  });

  it("answers 400 INVALID_UMA_ADDRESS for a malformed address, whatever its host", () => {
    for (const address of [
      "success.usd@sandbox.uma.money",
      "$success.usd",
      "$success usd@sandbox.uma.money",
      "$a@bad_host",
    ]) {
      const result = evaluateUmaReceiver(address);
      expect(result.outcome).toMatchObject({
        kind: "REJECT",
        status: 400,
        errorCode: "INVALID_UMA_ADDRESS",
      });
      expect(result.address).toBeNull();
    }
  });

  it("leaves addresses on other hosts to the server", () => {
    const result = evaluateUmaReceiver("$success.usd@vasp.example");
    expect(result.outcome).toEqual({ kind: "NOT_SANDBOX_HOST" });
    expect(result.address?.address).toBe("$success.usd@vasp.example");
    // A subdomain of the sandbox host is another host.
    expect(evaluateUmaReceiver("$success.usd@x.sandbox.uma.money").outcome.kind).toBe(
      "NOT_SANDBOX_HOST",
    );
  });
});

describe("invitation configuration", () => {
  it("refuses the placeholder UMA domain and accepts any other", () => {
    expect(invitationConfigurationOutcome(SANDBOX_DEFAULT_UMA_DOMAIN).outcome).toMatchObject({
      kind: "REJECT",
      status: 400,
      errorCode: "INVITATIONS_NOT_CONFIGURED",
    });
    for (const domain of ["wallet.example.com", "sandbox.localhost", "uma.sandbox.localhost.com"]) {
      expect(invitationConfigurationOutcome(domain).outcome).toEqual({ kind: "CONFIGURED" });
    }
  });
});
