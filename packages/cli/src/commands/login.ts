import { writeFileSync } from "node:fs";
import { SandboxApiError, WalletFlowError, otpLogin } from "@payments-sandbox/client";
import { SANDBOX_OTP_CODE } from "@payments-sandbox/sandbox-rules";
import { CliError, type CommandContext } from "../context.js";

export interface OtpLoginOptions {
  /** The code to answer with; the sandbox's accepting code when absent. */
  code?: string;
  /** Where to keep the session's signing key (written with mode 0600). */
  keyFile?: string;
}

/**
 * `login otp <credentialId>`: an EMAIL_OTP or SMS_OTP wallet login, both
 * legs, through the client's otpLogin. The session key is made here and is
 * never printed: with --key-file it is written to a file only its owner can
 * read, for later signed calls; without it, it is dropped.
 */
export async function loginOtp(
  { api, out }: CommandContext,
  credentialId: string,
  options: OtpLoginOptions,
): Promise<void> {
  out.step(`Logging in with ${credentialId} (challenge, sealed code, signed retry)...`);
  let wallet;
  try {
    wallet = await otpLogin(api, credentialId, { code: options.code ?? SANDBOX_OTP_CODE });
  } catch (error) {
    if (error instanceof SandboxApiError) throw new CliError(`login failed: ${error.message}`);
    if (error instanceof WalletFlowError) {
      throw new CliError(`login failed at ${error.step}: ${error.message}`);
    }
    throw error;
  }
  const { session, signingKey } = wallet;
  if (options.keyFile !== undefined) {
    const key = {
      sessionId: session.id,
      expiresAt: session.expiresAt,
      privateKeyHex: signingKey.privateKeyHex,
      publicKeyHex: signingKey.publicKeyHex,
    };
    writeFileSync(options.keyFile, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600 });
  }
  out.result(
    { session, ...(options.keyFile !== undefined ? { keyFile: options.keyFile } : {}) },
    () => [
      `${out.ok("✔")} Logged in by ${session.type}: session ${session.id}, expires ${session.expiresAt}`,
      options.keyFile !== undefined
        ? `  session signing key written to ${options.keyFile} (keep it secret)`
        : "  the session signing key was not kept (pass --key-file to keep it)",
    ],
  );
}
