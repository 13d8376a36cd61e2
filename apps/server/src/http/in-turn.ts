import type { RequestHandler } from "express";

/**
 * Middlewares one after another, as one: what an Express router does with
 * middlewares that take every request, without the router's path matching
 * and bookkeeping at each step (the API's chain and each path's validator
 * run on every request). An error, thrown or passed to `next`, or a
 * rejected promise, ends the chain and goes to `next`.
 */
export function inTurn(handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let index = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) {
        next(err);
        return;
      }
      const handler = handlers[index++];
      if (handler === undefined) {
        next();
        return;
      }
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.catch(step);
      } catch (thrown) {
        step(thrown ?? new Error("a middleware threw nothing"));
      }
    };
    step();
  };
}
