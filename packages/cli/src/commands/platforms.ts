import { done, ok, type CommandContext } from "../context.js";

/**
 * `platforms create [--name N] [--webhook-endpoint URL]`: a fresh isolated
 * platform (POST /sandbox/platforms), with the credentials of the sandbox's
 * own platform. Prints the new platform's credentials once, as shell exports
 * a CI job can eval, or as JSON.
 */
export async function createPlatform(
  { api, out, connection }: CommandContext,
  options: { name?: string; webhookEndpoint?: string },
): Promise<void> {
  out.step("Creating an isolated platform...");
  const platform = ok(
    "POST /sandbox/platforms",
    await api.POST("/sandbox/platforms", {
      body: {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.webhookEndpoint !== undefined
          ? { webhookEndpoint: options.webhookEndpoint }
          : {}),
      },
    }),
  );
  out.result({ ...platform, baseUrl: connection.baseUrl }, () => [
    `${out.ok("✔")} Platform ${platform.id} (${platform.name})`,
    out.dim("  Its secret is shown only now. To use the platform from this shell:"),
    `export SANDBOX_BASE_URL=${shellQuote(connection.baseUrl)}`,
    `export SANDBOX_TOKEN_ID=${shellQuote(platform.clientId)}`,
    `export SANDBOX_TOKEN_SECRET=${shellQuote(platform.clientSecret)}`,
    out.dim(`  Delete it with: payments-sandbox platforms delete ${platform.id}`),
  ]);
}

/** `platforms delete <platformId>`: the platform and everything it owns. */
export async function deletePlatform({ api, out }: CommandContext, platformId: string) {
  out.step(`Deleting ${platformId} and everything it owns...`);
  done(
    `DELETE /sandbox/platforms/${platformId}`,
    await api.DELETE("/sandbox/platforms/{platformId}", { params: { path: { platformId } } }),
  );
  out.result({ deleted: platformId }, () => [`${out.ok("✔")} Deleted ${platformId}`]);
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
