import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import bs58 from "bs58";
import bs58check from "bs58check";
import { base64Decode, bytesToHex, hexToBytes, utf8 } from "./encoding.js";

// Proof that a self-custody wallet signed a message, the way each chain's
// wallets sign text: EIP-191 `personal_sign` on EVM chains, TRON's own
// message prefix on Tron (both secp256k1 with a recoverable signature, the
// address derived from the recovered key), and ed25519 over the message bytes
// on Solana (the address is the public key). The signing helpers produce the
// same signatures a wallet would, for tests and scripts.

export type OwnershipChain = "evm" | "tron" | "solana";

/** keccak256(prefix ‖ decimal length ‖ message): the digest EVM and TRON wallets sign. */
function prefixedDigest(prefix: string, message: string): Uint8Array {
  const body = utf8(message);
  const head = utf8(`${prefix}${body.length}`);
  const joined = new Uint8Array(head.length + body.length);
  joined.set(head);
  joined.set(body, head.length);
  return keccak_256(joined);
}

const EVM_PREFIX = "\x19Ethereum Signed Message:\n";
const TRON_PREFIX = "\x19TRON Signed Message:\n";

/** The 20-byte account of an uncompressed secp256k1 public key (EVM and TRON). */
function accountBytes(publicKey: Uint8Array): Uint8Array {
  return keccak_256(publicKey.subarray(1)).subarray(12);
}

function evmAddress(publicKey: Uint8Array): string {
  return `0x${bytesToHex(accountBytes(publicKey))}`;
}

function tronAddress(publicKey: Uint8Array): string {
  const payload = new Uint8Array(21);
  payload[0] = 0x41;
  payload.set(accountBytes(publicKey), 1);
  return bs58check.encode(payload);
}

/** A 65-byte r ‖ s ‖ v signature as hex (`0x` optional); v is 27/28 or 0/1. */
function recoverSecp256k1(signatureHex: string, digest: Uint8Array): Uint8Array | undefined {
  const hex = signatureHex.startsWith("0x") ? signatureHex.slice(2) : signatureHex;
  if (!/^[0-9a-fA-F]{130}$/.test(hex)) return undefined;
  const bytes = hexToBytes(hex);
  const v = bytes[64]!;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  try {
    const signature = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), "compact");
    return signature.addRecoveryBit(recovery).recoverPublicKey(digest).toBytes(false);
  } catch {
    return undefined;
  }
}

/** A Solana signature as base58, base64 or hex: 64 bytes. */
function solanaSignatureBytes(signature: string): Uint8Array | undefined {
  const attempts = [
    () =>
      /^(0x)?[0-9a-fA-F]{128}$/.test(signature)
        ? hexToBytes(signature.replace(/^0x/, ""))
        : undefined,
    () => bs58.decode(signature),
    () => base64Decode(signature),
  ];
  for (const attempt of attempts) {
    try {
      const bytes = attempt();
      if (bytes?.length === 64) return bytes;
    } catch {
      // not this encoding
    }
  }
  return undefined;
}

/** Whether `signature` is the wallet at `address` signing exactly `message`. */
export function verifyWalletOwnership(
  chain: OwnershipChain,
  address: string,
  message: string,
  signature: string,
): boolean {
  switch (chain) {
    case "evm": {
      const key = recoverSecp256k1(signature, prefixedDigest(EVM_PREFIX, message));
      return key !== undefined && evmAddress(key) === address.toLowerCase();
    }
    case "tron": {
      const key = recoverSecp256k1(signature, prefixedDigest(TRON_PREFIX, message));
      return key !== undefined && tronAddress(key) === address;
    }
    case "solana": {
      const bytes = solanaSignatureBytes(signature);
      let publicKey: Uint8Array;
      try {
        publicKey = bs58.decode(address);
      } catch {
        return false;
      }
      if (!bytes || publicKey.length !== 32) return false;
      try {
        return ed25519.verify(bytes, utf8(message), publicKey);
      } catch {
        return false;
      }
    }
  }
}

/** The address of a wallet key: a secp256k1 key (32-byte hex) for EVM and TRON, an ed25519 seed for Solana. */
export function walletAddressOf(chain: OwnershipChain, privateKeyHex: string): string {
  const secret = hexToBytes(privateKeyHex);
  switch (chain) {
    case "evm":
      return evmAddress(secp256k1.getPublicKey(secret, false));
    case "tron":
      return tronAddress(secp256k1.getPublicKey(secret, false));
    case "solana":
      return bs58.encode(ed25519.getPublicKey(secret));
  }
}

/** What the wallet would answer when asked to sign `message` (hex for secp256k1 chains, base58 for Solana). */
export function signAsWallet(
  chain: OwnershipChain,
  privateKeyHex: string,
  message: string,
): string {
  const secret = hexToBytes(privateKeyHex);
  if (chain === "solana") return bs58.encode(ed25519.sign(utf8(message), secret));
  const digest = prefixedDigest(chain === "evm" ? EVM_PREFIX : TRON_PREFIX, message);
  const signature = secp256k1.sign(digest, secret, { prehash: false, format: "recovered" });
  // noble puts the recovery byte first; wallets put it last, as 27 + recovery.
  const out = new Uint8Array(65);
  out.set(signature.subarray(1), 0);
  out[64] = 27 + signature[0]!;
  return `0x${bytesToHex(out)}`;
}
