// The scripts the guides in docs/ print, taken out of the pages exactly as
// printed: a marker comment, then a ```ts block.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import type { TestSandbox } from "../harness.js";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

/** The script block after `<!-- marker -->` in docs/`page`; throws when there is none. */
export function guideScript(page: string, marker: string): string {
  const text = readFileSync(join(repoRoot, "docs", page), "utf8");
  const script = new RegExp(`<!-- ${marker} -->\\s*\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(text)?.[1];
  if (!script) throw new Error(`docs/${page} has no script block marked ${marker}`);
  return script;
}

/**
 * What TypeScript finds wrong in a guide's scripts, compiled as a partner's
 * strict ESM project would (`options` add to or override that base).
 */
export function typeProblems(files: string[], options: ts.CompilerOptions = {}): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ["node"],
    skipLibCheck: true,
    ...options,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.fileName}: ` : ""}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
    );
}

const run = promisify(execFile);

/**
 * Runs a guide's script as a partner would (through tsx), with the sandbox's
 * base URL and credentials in its environment, as the guides say; answers
 * what it printed. `cwd` and `loader` place it in another project, `env` is
 * the environment the credentials are added to (by default only PATH).
 */
export async function runGuideScript(
  sandbox: TestSandbox,
  file: string,
  options: { cwd?: string; loader?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const { stdout } = await run(process.execPath, ["--import", options.loader ?? "tsx", file], {
    cwd: options.cwd ?? repoRoot,
    env: {
      ...(options.env ?? { PATH: process.env.PATH ?? "" }),
      SANDBOX_BASE_URL: sandbox.server.baseUrl,
      SANDBOX_TOKEN_ID: sandbox.credentials.tokenId,
      SANDBOX_TOKEN_SECRET: sandbox.credentials.secret,
    },
  });
  return stdout;
}
