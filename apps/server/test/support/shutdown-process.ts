// The built server in a process of its own, started and stopped as CI jobs
// and process supervisors do, with fixed credentials (AUTH) to call it.
import { spawn, type ChildProcess } from "node:child_process";
import { mainJs } from "./sandbox-process.js";

const TOKEN_ID = "shutdown-test";
const SECRET = "shutdown-test-secret";
export const AUTH = `Basic ${Buffer.from(`${TOKEN_ID}:${SECRET}`).toString("base64")}`;

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

/** Kills whatever a test left running (for afterEach). */
export function killServerProcesses(): void {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
}

export async function startServerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [mainJs], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      LOG_LEVEL: "info",
      DATABASE_URL: databaseUrl,
      SANDBOX_TOKEN_ID: TOKEN_ID,
      SANDBOX_TOKEN_SECRET: SECRET,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  // "close", not "exit": by then everything it wrote has been read.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const started = () => {
      const m = /Base URL:\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
      if (m) resolve(Number(m[1]));
    };
    child.stdout!.on("data", started);
    void exited.then(({ code }) => reject(new Error(`exited (${code}):\n${stdout}${stderr}`)));
  });
  return { child, port, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Waits for the exit, or gives up after `ms` (the process is then killed). */
export async function exitWithin(server: ServerProcess, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    server.exited,
    new Promise<"still running">((resolve) => {
      timer = setTimeout(() => resolve("still running"), ms);
    }),
  ]);
  clearTimeout(timer);
  if (result === "still running") server.child.kill("SIGKILL");
  return result;
}
