import { createServer, IncomingMessage, ServerResponse, type Server } from "node:http";
import type { Express } from "express";
import { answerClientErrors } from "./client-error.js";

/**
 * An HTTP server for an Express app whose requests and responses are made
 * with the app's own prototypes (`app.request`, `app.response`) from the
 * start, through Node's documented `IncomingMessage` and `ServerResponse`
 * server options.
 *
 * Express gives each request those prototypes with `Object.setPrototypeOf`
 * when it arrives. In V8, an object whose prototype was changed does not
 * share the hidden class of the next one once properties are added to it
 * (Express and the router add a dozen), so every request and response had a
 * hidden class of its own: each property read of them, in Express, the
 * validator and here, missed its inline cache, and each new hidden class was
 * allocated for the old generation to collect. Made with the prototype
 * already in place, the `setPrototypeOf` changes nothing and they share one:
 * a bare Express route answered in 54–73 µs of CPU instead of about 200
 * (bench/RESULTS.md).
 */
export function expressServer(app: Express): Server {
  const server = createServer(
    {
      IncomingMessage: withPrototype(IncomingMessage, app.request),
      ServerResponse: withPrototype(ServerResponse, app.response),
    },
    app,
  );
  answerClientErrors(server);
  return server;
}

/**
 * A constructor of `base`'s objects whose prototype is `prototype`. Node's
 * request and response classes are function constructors that initialise
 * `this` (which is how they extend themselves), so called on an object that
 * already has Express's prototype they initialise it as they would their own.
 */
function withPrototype<C extends typeof IncomingMessage | typeof ServerResponse>(
  base: C,
  prototype: object,
): C {
  const initialise = base as unknown as (this: object, ...args: unknown[]) => void;
  function Made(this: object, ...args: unknown[]): void {
    initialise.apply(this, args);
  }
  Made.prototype = prototype;
  return Made as unknown as C;
}
