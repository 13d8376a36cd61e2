/**
 * Writes or checks the generated magic-values page.
 *   node dist/render-cli.js --write <path>   render the tables into <path>
 *   node dist/render-cli.js --check <path>   exit 1 when <path> differs from the rendered tables
 */
import { readFile, writeFile } from "node:fs/promises";
import { checkRenderedDocs, renderMagicValuesMarkdown } from "./render.js";

const USAGE = "usage: render-cli (--write | --check) <path>";

async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

async function main(args: readonly string[]): Promise<number> {
  const [flag, path, ...rest] = args;
  if ((flag !== "--write" && flag !== "--check") || path === undefined || rest.length > 0) {
    console.error(USAGE);
    return 2;
  }
  const rendered = renderMagicValuesMarkdown();
  if (flag === "--write") {
    await writeFile(path, rendered, "utf8");
    process.stdout.write(`wrote ${path}\n`);
    return 0;
  }
  const result = checkRenderedDocs(path, await readIfPresent(path), rendered);
  if (!result.ok) {
    console.error(result.message);
    return 1;
  }
  process.stdout.write(`${path} is up to date\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
