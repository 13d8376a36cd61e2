import { describe, expect, it } from "vitest";
import { individualKycOutcome, kybOutcome, kycOutcome } from "../evaluate.js";

describe("KYB", () => {
  it.each([
    ["Acme Ltd REG-000001", "PENDING", "001"],
    ["Acme Ltd REG-000002", "REJECTED", "002"],
    ["HRB 12345", "APPROVED", null],
    ["REG-00200X", "APPROVED", null],
    ["02", "APPROVED", null],
  ])("%j → %s", (registrationNumber, kybStatus, matched) => {
    const result = kybOutcome(registrationNumber);
    expect(result.outcome).toEqual({ kybStatus });
    expect(result.matched).toBe(matched);
  });
});

describe("individual KYC", () => {
  it.each([
    ["Sam Lee001", "PENDING", "MANUAL_REVIEW", "001"],
    ["Ana Souza 002", "REJECTED", "REFUSE", "002"],
    ["Kim Park003", "UNVERIFIED", "POOR_QUALITY_DOCUMENT", "003"],
    ["Jane Doe", "APPROVED", "REFUSE", null],
    ["Jo", "APPROVED", "REFUSE", null],
  ])("%j → %s", (fullName, kycStatus, onVerification, matched) => {
    const result = individualKycOutcome(fullName);
    expect(result.outcome).toEqual({ kycStatus, onVerification });
    expect(result.matched).toBe(matched);
  });
});

describe("KYC", () => {
  it.each([
    ["Smith001", "PENDING", "001"],
    ["Garcia-002", "REJECTED", "002"],
    ["Lovelace", "APPROVED", null],
    ["Smith 0002", "REJECTED", "002"],
    ["Li", "APPROVED", null],
  ])("%j → %s", (lastName, kycStatus, matched) => {
    const result = kycOutcome(lastName);
    expect(result.outcome).toEqual({ kycStatus });
    expect(result.matched).toBe(matched);
  });
});
