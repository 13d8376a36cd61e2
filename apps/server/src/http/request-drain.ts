import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { requestAnswered, requestBegun } from "../requests-in-flight.js";

/**
 * Lets a stopping server finish the requests it has begun before the
 * databases close under them. Closing every connection at once (what a stop
 * did before) cut requests whose handlers then went on writing, or failed
 * half-way, with the databases closing beneath them.
 *
 * A request counts from its start until its response is sent, or, when its
 * client went away first, until its handler has answered anyway: until then
 * that handler may still be writing.
 */
export class RequestDrain {
  private readonly open = new Set<ServerResponse>();
  /** Open requests whose client left before the answer: checked by polling. */
  private readonly abandoned = new Set<ServerResponse>();
  private stopping = false;

  constructor(private readonly server: Server) {
    server.on("request", (_req: IncomingMessage, res: ServerResponse) => this.track(res));
  }

  /** Requests begun and not yet answered. */
  get inFlight(): number {
    this.prune();
    return this.open.size;
  }

  /** What a close under way waits for, e.g. "2 requests in flight". */
  describe(): string {
    const n = this.inFlight;
    return `${n} ${n === 1 ? "request" : "requests"} in flight`;
  }

  /**
   * Stops taking connections, lets the requests in flight finish (each
   * answer then closes its connection), and closes the connections left:
   * idle keep-alive ones and ones whose next request had not arrived whole.
   * Waits as long as the requests take; the caller bounds the stop.
   */
  async close(): Promise<void> {
    this.stopping = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const res of this.open) this.lastOnItsConnection(res);
    await new Promise<void>((resolve) => {
      const check = () => {
        if (this.inFlight > 0) return;
        clearInterval(timer);
        resolve();
      };
      const timer = setInterval(check, 10);
      check();
    });
    this.server.closeAllConnections();
    await closed;
  }

  private track(res: ServerResponse): void {
    this.prune();
    if (this.stopping) this.lastOnItsConnection(res);
    this.open.add(res);
    requestBegun();
    res.once("finish", () => this.answered(res));
    res.once("close", () => {
      if (res.writableEnded) this.answered(res);
      else this.abandoned.add(res);
    });
  }

  private answered(res: ServerResponse): void {
    if (this.open.delete(res)) requestAnswered();
    this.abandoned.delete(res);
    // A keep-alive connection that just went idle takes no further request.
    if (this.stopping) this.server.closeIdleConnections();
  }

  /** Answers without keep-alive, so the connection closes once this answer is sent. */
  private lastOnItsConnection(res: ServerResponse): void {
    if (!res.headersSent) res.setHeader("Connection", "close");
  }

  private prune(): void {
    for (const res of this.abandoned) if (res.writableEnded) this.answered(res);
  }
}
