// The scripts the guides in docs/ print, taken out of the pages exactly as
// printed: a marker comment, then a ```ts block.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

/** The script block after `<!-- marker -->` in docs/`page`; throws when there is none. */
export function guideScript(page: string, marker: string): string {
  const text = readFileSync(join(repoRoot, "docs", page), "utf8");
  const script = new RegExp(`<!-- ${marker} -->\\s*\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(text)?.[1];
  if (!script) throw new Error(`docs/${page} has no script block marked ${marker}`);
  return script;
}
