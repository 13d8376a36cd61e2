import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type TestSandbox } from "./harness.js";
import { guideScript, repoRoot, runGuideScript, typeProblems } from "./support/guides.js";

// A partner's project, outside the repository: it installs the client and
// crypto packages from the tarballs `npm pack` makes (their own third-party
// dependencies come from the npm registry, or npm's cache), then type-checks
// and runs the cards and wallet guides against a live sandbox, and bundles
// the client for a browser. Nothing here can reach the workspace's packages:
// a missing file in `files`, a wrong `exports` or a dependency on a private
// package fails it.

const run = promisify(execFile);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const tsxLoader = import.meta.resolve("tsx");
/** An environment without the npm settings of the run that started the tests. */
const cleanEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? homedir() };

const scripts = {
  "cards-guide.mts": guideScript("cards-guide.md", "cards-guide:script"),
  "cards-network.mts": guideScript("cards-guide.md", "cards-guide:network-script"),
  "wallet-guide.mts": guideScript("wallet-guide.md", "wallet-guide:script"),
};

let scratch: string;
let tarballs: string[];

/** What of the sandbox's own install a pack could disturb: npm's record of it and the install stamp. */
function installState() {
  return ["node_modules/.package-lock.json", "node_modules/.sandbox-install-stamp"].map((file) => {
    const path = join(repoRoot, file);
    return { file, mtimeMs: statSync(path).mtimeMs, text: readFileSync(path, "utf8") };
  });
}
let installBefore: ReturnType<typeof installState>;
let packOutput: string;

beforeAll(async () => {
  const root = mkdtempSync(join(tmpdir(), "sandbox-packed-client-"));
  scratch = join(root, "partner-app");
  // Not made beforehand: the README's command makes it.
  const packed = join(root, "tarballs");
  mkdirSync(scratch);
  // A stale install would make the pack reinstall (`npm ci`) under the
  // running suite; that is not what this test is about.
  await run(process.execPath, ["scripts/ensure-installed.mjs", "--check"], { cwd: repoRoot }).catch(
    () => {
      throw new Error("node_modules is stale: run `npm ci` before this test");
    },
  );
  installBefore = installState();
  // The README's command, typed in the repository.
  const { stdout } = await run(npm, ["run", "--silent", "client:pack", "--", packed], {
    cwd: repoRoot,
  });
  packOutput = stdout;
  tarballs = ["crypto", "client"].map((name) => join(packed, `payments-sandbox-${name}-0.1.0.tgz`));
  writeFileSync(
    join(scratch, "package.json"),
    JSON.stringify({ name: "partner-app", private: true, type: "module" }, null, 2),
  );
  // The tarballs only: npm resolves the client's dependency on the crypto
  // package by its version, to the tarball given alongside.
  await run(
    npm,
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs],
    { cwd: scratch, env: cleanEnv },
  );
  for (const [name, text] of Object.entries(scripts)) writeFileSync(join(scratch, name), text);
}, 180_000);

afterAll(() => {
  if (scratch) rmSync(join(scratch, ".."), { recursive: true, force: true });
});

const installed = (name: string) => join(scratch, "node_modules", "@payments-sandbox", name);

describe("the packed client, installed outside the repository", () => {
  it("is packed by `npm run client:pack -- <folder>`, which leaves the sandbox's install as it was", () => {
    expect(readdirSync(join(scratch, "..", "tarballs")).sort()).toEqual([
      "payments-sandbox-client-0.1.0.tgz",
      "payments-sandbox-crypto-0.1.0.tgz",
    ]);
    // It tells the partner the command to type in their project.
    expect(packOutput).toContain(`npm install ${tarballs.join(" ")}`);
    expect(packOutput).not.toMatch(/npm ci|reinstalling/);
    expect(installState()).toEqual(installBefore);
  });

  it("installs both packages as files from their tarballs, the client needing crypto by version", () => {
    for (const name of ["client", "crypto"]) {
      // A copy inside the project, not a link back into the workspace.
      expect(realpathSync(installed(name)).startsWith(realpathSync(scratch))).toBe(true);
    }
    const client = JSON.parse(readFileSync(join(installed("client"), "package.json"), "utf8")) as {
      private?: boolean;
      dependencies: Record<string, string>;
    };
    expect(client.private).toBeUndefined();
    expect(client.dependencies["@payments-sandbox/crypto"]).toBe("0.1.0");
    expect(existsSync(join(installed("client"), "README.md"))).toBe(true);
    expect(existsSync(join(installed("crypto"), "README.md"))).toBe(true);
    // Built code and types only: no tests.
    expect(existsSync(join(installed("client"), "dist", "client.test.js"))).toBe(false);
  });

  it("type-checks the guides against the installed packages' types", () => {
    const problems = typeProblems(
      Object.keys(scripts).map((name) => join(scratch, name)),
      {
        lib: ["lib.es2023.d.ts"],
        // The partner's own @types/node; the client's types need no DOM lib.
        typeRoots: [join(repoRoot, "node_modules", "@types")],
        skipLibCheck: false,
      },
    ).map((problem) => problem.replace(scratch, ""));
    expect(problems).toEqual([]);
  });

  it("bundles for a browser, and ships a ready browser bundle", async () => {
    writeFileSync(
      join(scratch, "browser.js"),
      `import { createClient, passkeyLogin, otpLogin, signed } from "@payments-sandbox/client";\n` +
        `globalThis.wallet = { createClient, passkeyLogin, otpLogin, signed };\n`,
    );
    const bundled = await build({
      absWorkingDir: scratch,
      entryPoints: ["browser.js"],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
    });
    expect(bundled.errors).toEqual([]);
    expect(bundled.outputFiles[0]!.text).toContain("payloadToSign");

    // The prebuilt bundle imports nothing: it loads as it is.
    const file = fileURLToPath(
      import.meta.resolve("@payments-sandbox/client/browser", `file://${scratch}/`),
    );
    expect(realpathSync(file).startsWith(realpathSync(scratch))).toBe(true);
    const { stdout } = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(`file://${file}`)}); console.log(typeof m.passkeyLogin, typeof m.createClient);`,
      ],
      { cwd: scratch, env: cleanEnv },
    );
    expect(stdout.trim()).toBe("function function");
  });

  describe("against a live sandbox", () => {
    let sandbox: TestSandbox;
    beforeAll(async () => {
      sandbox = await startSandbox("sqlite");
    });
    afterAll(async () => {
      await sandbox?.stop();
    });

    const runScript = (name: keyof typeof scripts) =>
      runGuideScript(sandbox, name, { cwd: scratch, loader: tsxLoader, env: cleanEnv });

    it("runs the cards guide", async () => {
      const first = await runScript("cards-guide.mts");
      expect(first).toContain("refunded 2750; balance back to 10000");
      const network = await runScript("cards-network.mts");
      expect(network).toContain("return reversed: SETTLED; balance 4500");
    }, 120_000);

    it("runs the wallet guide: logins, signed actions, a payment, refresh and logout", async () => {
      const stdout = await runScript("wallet-guide.mts");
      expect(stdout).toMatch(/^logged in by EMAIL_OTP, session Session:\S+$/m);
      expect(stdout).toContain("paid 5000 USDB, signed by the session key");
      expect(stdout).toContain("logged in by OAUTH, session key opened");
      expect(stdout).toContain("refreshed: the new key signs, the old one is refused");
    }, 90_000);
  });
});
