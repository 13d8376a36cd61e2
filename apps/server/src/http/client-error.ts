import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "../errors.js";

// Requests Node refuses before any of the app sees them (headers too large,
// a request line or header it cannot parse, a request that never finished
// arriving) get the API's Error object too, not Node's bare status line.

/** The answer to a request Node could not read, by the parser's error code. */
export function clientErrorOf(code: string | undefined): ApiError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new ApiError(
        431,
        "INVALID_INPUT",
        "Request headers are too large: at most 16 KiB of request line and headers in all",
      );
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ApiError(408, "INVALID_INPUT", "The request did not arrive in time");
    default:
      return new ApiError(
        400,
        "INVALID_INPUT",
        `The request is not valid HTTP${code === undefined ? "" : ` (${code})`}`,
      );
  }
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};

export function answerClientErrors(server: Server): void {
  server.on("clientError", (err: Error & { code?: string }, socket: Duplex) => {
    // Nothing to answer on a connection the client dropped or one already answered.
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const error = clientErrorOf(err.code);
    const body = JSON.stringify(error.toBody());
    socket.end(
      `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? "Bad Request"}\r\n` +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Trace-Id: ${randomUUID()}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  });
}
