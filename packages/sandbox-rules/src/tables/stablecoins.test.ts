import { describe, expect, it } from "vitest";
import { stablecoinOperationOutcome, stablecoinProviderAccountOutcome } from "../evaluate.js";

describe("stablecoin provider account link", () => {
  it.each([
    ["brale_client_002", "INVALID"],
    ["brale_client_003", "REVOKED"],
    ["brale_client_123", "ACTIVE"],
    ["ab", "ACTIVE"],
  ])("%s → %s", (apiClientId, status) => {
    expect(stablecoinProviderAccountOutcome(apiClientId).outcome).toEqual({ status });
  });
});

describe("stablecoin mints and burns", () => {
  it("reads the last 3 digits of the amount in cents", () => {
    expect(stablecoinOperationOutcome("100002").outcome).toEqual({
      kind: "FAIL",
      failureReason: "PROVIDER_TRANSFER_FAILED",
    });
    expect(stablecoinOperationOutcome("100003").outcome).toEqual({ kind: "NEVER_FUNDED" });
    expect(stablecoinOperationOutcome("2503").outcome).toMatchObject({
      kind: "REJECT",
      status: 503,
      errorCode: "SERVICE_UNAVAILABLE",
    });
    for (const cents of ["100000", "1", "99", "100004"]) {
      expect(stablecoinOperationOutcome(cents).outcome).toEqual({ kind: "COMPLETE" });
    }
  });
});
