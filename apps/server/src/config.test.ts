import { describe, expect, it } from "vitest";
import { defaultPasskeyOrigins, loadAuthConfig } from "./config.js";

describe("passkey relying-party defaults", () => {
  it("accepts the served origin, and localhost on the same port when it is a loopback address", () => {
    expect(defaultPasskeyOrigins("http://127.0.0.1:3000")).toEqual([
      "http://127.0.0.1:3000",
      "http://localhost:3000",
    ]);
    expect(defaultPasskeyOrigins("http://localhost:4000")).toEqual(["http://localhost:4000"]);
    expect(defaultPasskeyOrigins("http://[::1]:3000")).toEqual([
      "http://[::1]:3000",
      "http://localhost:3000",
    ]);
    expect(defaultPasskeyOrigins("https://sandbox.example.com")).toEqual([
      "https://sandbox.example.com",
    ]);
  });

  it("leaves the origins to the server unless PASSKEY_ORIGIN names them", () => {
    expect(loadAuthConfig({}).passkeyOrigins).toEqual([]);
    expect(
      loadAuthConfig({ PASSKEY_ORIGIN: "https://app.example.com, http://localhost:5173" })
        .passkeyOrigins,
    ).toEqual(["https://app.example.com", "http://localhost:5173"]);
  });

  it("takes the RP ID from PUBLIC_BASE_URL's host when it is a domain name", () => {
    expect(loadAuthConfig({}).passkeyRpId).toBe("localhost");
    expect(loadAuthConfig({ PUBLIC_BASE_URL: "https://sandbox.example.com/" }).passkeyRpId).toBe(
      "sandbox.example.com",
    );
    expect(loadAuthConfig({ PUBLIC_BASE_URL: "http://10.0.0.5:3000" }).passkeyRpId).toBe(
      "localhost",
    );
    expect(
      loadAuthConfig({
        PUBLIC_BASE_URL: "https://sandbox.example.com",
        PASSKEY_RP_ID: "example.com",
      }).passkeyRpId,
    ).toBe("example.com");
  });
});
