import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import {
  cli,
  createTestPlatform,
  startLiveSandbox,
  type LiveSandbox,
  type TestPlatform,
} from "./support.js";

// Every command against a live sandbox, each test on an isolated platform of
// its own (made and deleted with the CLI's `platforms` commands). A test file
// calls onePlatformPerTest() once, at its top level; `sandbox` and `platform`
// are live bindings to what its hooks made, for the file's tests to read.

type EventRecord = Schemas["WebhookEventRecord"];

export let sandbox: LiveSandbox;
export let platform: TestPlatform;

export function onePlatformPerTest(): void {
  beforeAll(async () => {
    sandbox = await startLiveSandbox();
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  beforeEach(async (context) => {
    platform = await createTestPlatform(sandbox, context.task.name.slice(0, 200));
  });
  afterEach(async () => {
    const deleted = await cli(["platforms", "delete", platform.created.id], sandbox.rootEnv);
    expect(deleted.code, deleted.stderr).toBe(0);
  });
}

/** The command's --json output on the test's platform, which must exit 0. */
export async function json<T>(args: string[]): Promise<T> {
  const result = await cli([...args, "--json"], platform.env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** The platform's events about one object, newest first. */
export async function eventsAbout(objectId: string): Promise<EventRecord[]> {
  const page = await json<{ data: EventRecord[] }>(["events", "list", "--object-id", objectId]);
  return page.data;
}
