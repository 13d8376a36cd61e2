import { parseArgs } from "node:util";
import { advanceClock, showClock } from "./commands/clock.js";
import { listEvents, replayEvent } from "./commands/events.js";
import { listen } from "./commands/listen.js";
import { loginOtp } from "./commands/login.js";
import { tailLogs } from "./commands/logs.js";
import { createPlatform, deletePlatform } from "./commands/platforms.js";
import { FLOWS, listFlows, parseOverride, quoteOutcomes, trigger } from "./commands/trigger.js";
import {
  CliError,
  DEFAULT_BASE_URL,
  ENV,
  connect,
  httpUrl,
  networkError,
  usageError,
  type CommandContext,
} from "./context.js";
import { createOutput, type Streams } from "./output.js";

const OPTIONS = {
  "base-url": { type: "string" },
  "token-id": { type: "string" },
  "token-secret": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  // listen
  "forward-to": { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  "public-url": { type: "string" },
  // trigger
  amount: { type: "string" },
  outcome: { type: "string" },
  "no-advance": { type: "boolean" },
  override: { type: "string", multiple: true },
  list: { type: "boolean" },
  // events list
  type: { type: "string" },
  "object-id": { type: "string" },
  limit: { type: "string" },
  // platforms create
  name: { type: "string" },
  "webhook-endpoint": { type: "string" },
  // logs tail
  status: { type: "string" },
  method: { type: "string" },
  path: { type: "string" },
  "error-code": { type: "string" },
  // login otp
  code: { type: "string" },
  "key-file": { type: "string" },
} as const;

type OptionName = keyof typeof OPTIONS;
const GLOBAL: readonly OptionName[] = ["base-url", "token-id", "token-secret", "json", "help"];
/** The words each command takes after its name (more is a usage error). */
const COMMAND_ARGUMENTS: Record<string, number> = {
  listen: 0,
  trigger: 1,
  "events list": 0,
  "events replay": 1,
  "clock show": 0,
  "clock advance": 1,
  "platforms create": 0,
  "platforms delete": 1,
  "login otp": 1,
  "logs tail": 0,
};

/** The options each command takes besides the global ones. */
const COMMAND_OPTIONS: Record<string, readonly OptionName[]> = {
  listen: ["forward-to", "host", "port", "public-url"],
  trigger: ["amount", "outcome", "no-advance", "override", "list"],
  "events list": ["type", "object-id", "limit"],
  "events replay": [],
  "clock show": [],
  "clock advance": [],
  "platforms create": ["name", "webhook-endpoint"],
  "platforms delete": [],
  "login otp": ["code", "key-file"],
  "logs tail": ["status", "method", "path", "error-code"],
};

export function usage(): string {
  const flows = Object.entries(FLOWS)
    .map(([name, flow]) => `    ${name.padEnd(29)}${flow.summary}`)
    .join("\n");
  const outcomes = quoteOutcomes()
    .map((o) => `    ${o.name.padEnd(9)}${o.description.replaceAll("`", "")}`)
    .join("\n");
  return `Usage: payments-sandbox <command> [options]

Commands:
  listen [--forward-to URL]        Receive the platform's webhooks here: verify, print, forward
         [--port N] [--host H] [--public-url URL]
  trigger <flow> [--amount N] [--override object.field=value]...
                                   Run a flow end to end; each causes webhook events
  trigger --list                   Each flow, its events, and what --override can change
  events list [--type T] [--object-id ID] [--limit N]
                                   The webhook event log with every delivery attempt
  events replay <eventId>          Deliver a recorded event again
  clock show                       The platform's sandbox time
  clock advance <duration>         Move the platform's clock (30s, 6m, 1h30m, 2d, or seconds)
  platforms create [--name N] [--webhook-endpoint URL]
                                   A fresh isolated platform (needs the sandbox's own credentials)
  platforms delete <platformId>    Delete an isolated platform and everything it owns
  logs tail [--status 4xx,500] [--method POST] [--path /customers] [--error-code C]
                                   The platform's API requests as they happen: method, path,
                                   status, error, latency, request id (filters: any of a list)
  login otp <credentialId> [--code C] [--key-file PATH]
                                   Log a wallet in with its EMAIL_OTP or SMS_OTP credential
                                   (code: the sandbox's accepting one; the session key is
                                   written to PATH, mode 0600, or dropped)

Flows:
${flows}

Quote outcomes (trigger quote --outcome ..., by the account number's suffix):
${outcomes}
  Delayed outcomes are reached by advancing the clock unless --no-advance.

Options:
  --base-url URL       API base URL with its version (env ${ENV.baseUrl}, default ${DEFAULT_BASE_URL})
  --token-id ID        API token id (env ${ENV.tokenId})
  --token-secret S     API client secret (env ${ENV.tokenSecret})
  --json               Machine-readable output on stdout (progress goes to stderr)
  -h, --help           This help

Exit codes: 0 done, 1 the sandbox refused or could not be reached, 2 wrong usage.
`;
}

function integer(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw usageError(`--${name} must be a whole number of at least ${min}`);
  }
  return Number(value);
}

/** "a,b, c" → ["a", "b", "c"]. */
function list(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function positional(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (value === undefined) throw usageError(`missing ${what}; see --help`);
  return value;
}

/**
 * Runs one command line. Resolves with the exit code; `stopped` resolves
 * when a long-running command (listen) should finish.
 */
export async function run(
  argv: readonly string[],
  streams: Streams,
  stopped: Promise<void>,
): Promise<number> {
  const json = argv.includes("--json");
  const out = createOutput(json, streams);
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    const [command, sub] = positionals;
    if (values.help || command === undefined || command === "help") {
      streams.stdout.write(usage());
      return 0;
    }
    const key = command === "listen" || command === "trigger" ? command : `${command} ${sub}`;
    const allowed = COMMAND_OPTIONS[key];
    if (!allowed) throw usageError(`unknown command "${positionals.join(" ")}"; see --help`);
    for (const name of Object.keys(values) as OptionName[]) {
      if (!GLOBAL.includes(name) && !allowed.includes(name)) {
        throw usageError(`--${name} is not an option of ${key}`);
      }
    }
    // "clock advance 6 minutes" must not quietly become 6 seconds.
    const words = positionals.slice(key.split(" ").length);
    const extra = words.slice(COMMAND_ARGUMENTS[key] ?? 0);
    if (extra.length > 0) {
      throw usageError(
        `unexpected ${extra.length === 1 ? "argument" : "arguments"} "${extra.join(" ")}" after ${key}${words.length > extra.length ? ` ${words.slice(0, words.length - extra.length).join(" ")}` : ""}; see --help`,
      );
    }

    if (key === "trigger" && values.list) {
      if (words.length > 0 || values.override || values.amount || values.outcome) {
        throw usageError("trigger --list takes no flow or other options");
      }
      listFlows(out);
      return 0;
    }

    const env = streams.env;
    const tokenId = values["token-id"] ?? env[ENV.tokenId];
    const secret = values["token-secret"] ?? env[ENV.tokenSecret];
    if (!tokenId || !secret) {
      throw usageError(
        `credentials missing: pass --token-id and --token-secret, or set ${ENV.tokenId} and ${ENV.tokenSecret}`,
      );
    }
    const connection = {
      baseUrl: (values["base-url"] ?? env[ENV.baseUrl] ?? DEFAULT_BASE_URL).replace(/\/+$/, ""),
      tokenId,
      secret,
    };
    const ctx: CommandContext = { out, connection, api: connect(connection), stopped };

    switch (key) {
      case "listen":
        await listen(ctx, {
          ...(values["forward-to"] !== undefined
            ? { forwardTo: httpUrl("forward-to", values["forward-to"]) }
            : {}),
          host: values.host ?? "127.0.0.1",
          port: integer("port", values.port, 0) ?? 0,
          ...(values["public-url"] !== undefined ? { publicUrl: values["public-url"] } : {}),
        });
        break;
      case "trigger":
        await trigger(ctx, positional(positionals, 1, "the flow (trigger --list shows them)"), {
          ...(values.amount !== undefined ? { amount: integer("amount", values.amount, 1)! } : {}),
          overrides: (values.override ?? []).map(parseOverride),
          ...(values.outcome !== undefined ? { outcome: values.outcome } : {}),
          advance: values["no-advance"] !== true,
        });
        break;
      case "events list": {
        const limit = integer("limit", values.limit, 1);
        await listEvents(ctx, {
          ...(values.type !== undefined ? { type: values.type } : {}),
          ...(values["object-id"] !== undefined ? { objectId: values["object-id"] } : {}),
          ...(limit !== undefined ? { limit } : {}),
        });
        break;
      }
      case "events replay":
        await replayEvent(ctx, positional(positionals, 2, "the event id"));
        break;
      case "clock show":
        await showClock(ctx);
        break;
      case "clock advance":
        await advanceClock(ctx, positional(positionals, 2, "the duration"));
        break;
      case "platforms create":
        await createPlatform(ctx, {
          ...(values.name !== undefined ? { name: values.name } : {}),
          ...(values["webhook-endpoint"] !== undefined
            ? { webhookEndpoint: values["webhook-endpoint"] }
            : {}),
        });
        break;
      case "platforms delete":
        await deletePlatform(ctx, positional(positionals, 2, "the platform id"));
        break;
      case "logs tail":
        await tailLogs(ctx, {
          ...(values.status !== undefined ? { status: list(values.status) } : {}),
          ...(values.method !== undefined ? { method: list(values.method) } : {}),
          ...(values.path !== undefined ? { path: values.path } : {}),
          ...(values["error-code"] !== undefined ? { errorCode: list(values["error-code"]) } : {}),
        });
        break;
      case "login otp":
        await loginOtp(ctx, positional(positionals, 2, "the credential id"), {
          ...(values.code !== undefined ? { code: values.code } : {}),
          ...(values["key-file"] !== undefined ? { keyFile: values["key-file"] } : {}),
        });
        break;
    }
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      out.warn(`${out.bad("error:")} ${error.message}`);
      return error.exitCode;
    }
    // parseArgs reports unknown options and missing values this way.
    if (
      error instanceof TypeError &&
      "code" in error &&
      String(error.code).startsWith("ERR_PARSE_ARGS")
    ) {
      out.warn(`${out.bad("error:")} ${error.message}; see --help`);
      return 2;
    }
    // fetch failing to connect: the sandbox is not where the CLI looked.
    if (error instanceof TypeError && error.message === "fetch failed") {
      out.warn(`${out.bad("error:")} cannot reach the sandbox: ${networkError(error)}`);
      return 1;
    }
    throw error;
  }
}
