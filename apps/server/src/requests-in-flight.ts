// Requests begun and not yet answered, over every server of the process:
// counted by the HTTP layer (http/request-drain.ts), read by what chooses
// where work runs under load (crypto/off-thread.ts), which sits below it.

let inProcess = 0;

/** Requests begun and not yet answered by any server of this process. */
export function requestsInFlight(): number {
  return inProcess;
}

/** A request has begun. */
export function requestBegun(): void {
  inProcess++;
}

/** A request counted by requestBegun is answered (or its handler is done). */
export function requestAnswered(): void {
  inProcess--;
}
