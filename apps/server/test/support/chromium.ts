// Debian's Chromium, as the browser tests drive it (.ci/run installs it).
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless Chromium with a fresh profile in a temp dir (remove `profile` when done). */
export async function launchChromium(
  name: string,
): Promise<{ context: BrowserContext; profile: string }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: this test drives Debian's Chromium ` +
        "(apt-get install -y chromium; .ci/run installs it).",
    );
  }
  const profile = mkdtempSync(join(tmpdir(), `sandbox-${name}-chromium-`));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
  });
  return { context, profile };
}
