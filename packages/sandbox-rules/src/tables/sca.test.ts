import { describe, expect, it } from "vitest";
import { contactVerificationCodeOutcome, scaCodeOutcome } from "../evaluate.js";
import {
  CONTACT_VERIFICATION_REGIONS,
  SANDBOX_CONTACT_VERIFICATION_CODE,
  SANDBOX_SCA_CODE,
  SCA_REGIONS,
} from "./sca.js";

describe("SCA code", () => {
  it("accepts the sandbox code only", () => {
    expect(scaCodeOutcome(SANDBOX_SCA_CODE).outcome).toEqual({ kind: "ACCEPT" });
    expect(scaCodeOutcome("123457").outcome).toMatchObject({
      kind: "REJECT",
      status: 400,
      errorCode: "INVALID_INPUT",
    });
    expect(scaCodeOutcome(undefined).outcome).toMatchObject({ kind: "REJECT" });
  });

  it("challenges the European Economic Area only", () => {
    expect(SCA_REGIONS.has("DE")).toBe(true);
    expect(SCA_REGIONS.has("NO")).toBe(true);
    expect(SCA_REGIONS.has("US")).toBe(false);
    expect(SCA_REGIONS.has("GB")).toBe(false);
  });
});

describe("contact verification code", () => {
  it("accepts the sandbox code only", () => {
    expect(contactVerificationCodeOutcome(SANDBOX_CONTACT_VERIFICATION_CODE).outcome).toEqual({
      kind: "ACCEPT",
    });
    for (const code of ["123457", " 123456", "000000", undefined]) {
      expect(contactVerificationCodeOutcome(code).outcome).toMatchObject({
        kind: "REJECT",
        status: 400,
        errorCode: "INVALID_INPUT",
      });
    }
  });

  it("is required in the European Economic Area only", () => {
    expect(CONTACT_VERIFICATION_REGIONS.has("FR")).toBe(true);
    expect(CONTACT_VERIFICATION_REGIONS.has("IS")).toBe(true);
    expect(CONTACT_VERIFICATION_REGIONS.has("US")).toBe(false);
    expect(CONTACT_VERIFICATION_REGIONS.has("CH")).toBe(false);
  });
});
