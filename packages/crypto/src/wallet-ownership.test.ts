import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import { signAsWallet, verifyWalletOwnership, walletAddressOf } from "./wallet-ownership.js";

describe("wallet ownership signatures", () => {
  // web3.js documents this personal_sign of "Some data" with this key.
  const evmKey = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
  const evmSignature =
    "0xb91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c";

  it("derives the published EVM address and signature (known answer)", () => {
    const address = walletAddressOf("evm", evmKey);
    expect(address).toBe("0x2c7536e3605d9c16a7a3d7b1898e529396a65c23");
    expect(signAsWallet("evm", evmKey, "Some data")).toBe(evmSignature);
    expect(
      verifyWalletOwnership(
        "evm",
        "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
        "Some data",
        evmSignature,
      ),
    ).toBe(true);
  });

  it("refuses another message or address and garbage, and takes v as 0/1 too", () => {
    const address = walletAddressOf("evm", evmKey);
    expect(verifyWalletOwnership("evm", address, "Other data", evmSignature)).toBe(false);
    expect(verifyWalletOwnership("evm", `0x${"11".repeat(20)}`, "Some data", evmSignature)).toBe(
      false,
    );
    const zeroBased = `${evmSignature.slice(0, -2)}01`;
    expect(verifyWalletOwnership("evm", address, "Some data", zeroBased)).toBe(true);
    expect(verifyWalletOwnership("evm", address, "Some data", "0x1234")).toBe(false);
    expect(verifyWalletOwnership("evm", address, "Some data", `0x${"00".repeat(65)}`)).toBe(false);
  });

  it("derives the RFC 8032 ed25519 key as a Solana address and verifies its signatures", () => {
    const seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const address = walletAddressOf("solana", seed);
    // RFC 8032 test 1's public key, base58.
    expect(address).toBe("FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z");
    const signature = signAsWallet("solana", seed, "prove it");
    expect(verifyWalletOwnership("solana", address, "prove it", signature)).toBe(true);
    expect(verifyWalletOwnership("solana", address, "prove it!", signature)).toBe(false);
    const asBase64 = Buffer.from(bs58.decode(signature)).toString("base64");
    expect(verifyWalletOwnership("solana", address, "prove it", asBase64)).toBe(true);
  });

  it("signs and verifies TRON messages against a base58check T-address", () => {
    const key = "01".repeat(32);
    const address = walletAddressOf("tron", key);
    expect(address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    const signature = signAsWallet("tron", key, "tron proof");
    expect(verifyWalletOwnership("tron", address, "tron proof", signature)).toBe(true);
    // The same key signing as an EVM wallet is not a TRON signature.
    expect(
      verifyWalletOwnership("tron", address, "tron proof", signAsWallet("evm", key, "tron proof")),
    ).toBe(false);
  });
});
