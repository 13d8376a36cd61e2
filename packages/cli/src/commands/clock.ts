import { ok, usageError, type CommandContext } from "../context.js";
import { parseDuration } from "../duration.js";

/** `clock show`: the platform's sandbox time and offset. */
export async function showClock({ api, out }: CommandContext): Promise<void> {
  const clock = ok("GET /sandbox/clock", await api.GET("/sandbox/clock"));
  out.result(clock, () => [`Sandbox time ${clock.now} (${clock.offsetSeconds}s ahead)`]);
}

/**
 * `clock advance <duration>`: moves the platform's clock forward; the sandbox
 * applies every delayed outcome that fell due before it answers.
 */
export async function advanceClock({ api, out }: CommandContext, duration: string) {
  const seconds = parseDuration(duration);
  if (seconds === undefined || seconds < 1) {
    throw usageError(`"${duration}" is not a duration: use e.g. 30s, 6m, 1h30m, 2d or seconds`);
  }
  out.step(`Advancing the sandbox clock by ${seconds}s...`);
  const clock = ok(
    "POST /sandbox/clock/advance",
    await api.POST("/sandbox/clock/advance", { body: { seconds } }),
  );
  out.result(clock, () => [
    `${out.ok("✔")} Sandbox time ${clock.now} (${clock.offsetSeconds}s ahead); ${clock.jobsRun} delayed outcome(s) applied`,
  ]);
}
