import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "../../src/paths.js";

// The built server as a partner runs it: `node dist/main.js` in a process of
// its own, with its banner and logs on its standard output.

export const mainJs = join(repoRoot, "apps/server/dist/main.js");

export interface SandboxProcess {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  baseUrl: string;
  /** Sends SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Kills whatever a test left running (for afterEach). */
export function killAll(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

function spawnMain(env: Record<string, string>, cwd?: string) {
  const child = spawn(process.execPath, [mainJs], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd ? { cwd } : {}),
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let output = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => {
    output += d.toString();
    stderr += d.toString();
  });
  return { child, output: () => output, stderr: () => stderr };
}

/** Starts the server and waits for its banner. */
export async function startProcess(
  env: Record<string, string>,
  options: { cwd?: string } = {},
): Promise<SandboxProcess> {
  const { child, output } = spawnMain(env, options.cwd);
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output()}`)), 30_000);
    const poll = setInterval(() => {
      const m = /Base URL:\s+(\S+)/.exec(output());
      if (m) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve(m[1]!);
      }
    }, 50);
    child.once("exit", (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`server exited with ${code}:\n${output()}`));
    });
  });
  return {
    child,
    output,
    baseUrl,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once("exit", (code) => resolve(code));
        child.kill("SIGTERM");
      }),
  };
}

/** Runs the server until it exits by itself (a start that must fail). */
export async function runUntilExit(
  env: Record<string, string>,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; output: string; stderr: string }> {
  const { child, output, stderr } = spawnMain(env, options.cwd);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not exit:\n${output()}`));
    }, options.timeoutMs ?? 20_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output: output(), stderr: stderr() });
    });
  });
}

/** The JSON log lines of a process's output. */
export function logLines(output: string): Record<string, unknown>[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
