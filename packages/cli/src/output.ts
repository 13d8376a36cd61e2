import { styleText } from "node:util";

/**
 * Where a command writes. People get short readable lines (colour only on a
 * terminal, and never with NO_COLOR); scripts pass --json and get JSON on
 * stdout, one document per command (one line per event for `listen`), with
 * progress kept off stdout.
 */
export interface Output {
  readonly json: boolean;
  /** A progress line for people (stderr with --json, so stdout stays parseable). */
  step(text: string): void;
  /** A line of the result for people; nothing with --json. */
  line(text: string): void;
  /** The command's result: JSON with --json, else the lines `human` gives. */
  result(value: unknown, human: () => string[]): void;
  /** One JSON line (for streams such as `listen --json`). */
  jsonLine(value: unknown): void;
  warn(text: string): void;
  ok(text: string): string;
  bad(text: string): string;
  dim(text: string): string;
}

export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
}

export function createOutput(json: boolean, streams: Streams): Output {
  const colour = streams.stdout.isTTY === true && !streams.env.NO_COLOR;
  const style = (format: Parameters<typeof styleText>[0], text: string) =>
    colour ? styleText(format, text) : text;
  const write = (stream: NodeJS.WritableStream, text: string) => stream.write(`${text}\n`);
  return {
    json,
    step: (text) => write(json ? streams.stderr : streams.stdout, text),
    line: (text) => {
      if (!json) write(streams.stdout, text);
    },
    result: (value, human) => {
      if (json) write(streams.stdout, JSON.stringify(value, null, 2));
      else for (const text of human()) write(streams.stdout, text);
    },
    jsonLine: (value) => write(streams.stdout, JSON.stringify(value)),
    warn: (text) => write(streams.stderr, text),
    ok: (text) => style("green", text),
    bad: (text) => style("red", text),
    dim: (text) => style("dim", text),
  };
}
