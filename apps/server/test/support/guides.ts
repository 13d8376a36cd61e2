// The scripts the guides in docs/ print, taken out of the pages exactly as
// printed: a marker comment, then a ```ts block.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

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
