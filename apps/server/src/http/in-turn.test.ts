import type { NextFunction, Request, RequestHandler, Response } from "express";
import { describe, expect, it } from "vitest";
import { inTurn } from "./in-turn.js";

const req = {} as Request;
const res = {} as Response;

/** Runs the chain and answers what it passed to its `next`. */
function outcome(handlers: RequestHandler[]): Promise<unknown> {
  return new Promise((resolve) => {
    const next: NextFunction = (err?: unknown) => resolve(err ?? "next");
    inTurn(handlers)(req, res, next);
  });
}

describe("inTurn", () => {
  it("runs every middleware in order, then goes on", async () => {
    const seen: number[] = [];
    const step =
      (n: number): RequestHandler =>
      (_req, _res, next) => {
        seen.push(n);
        next();
      };
    expect(await outcome([step(1), step(2), step(3)])).toBe("next");
    expect(seen).toEqual([1, 2, 3]);
  });

  it("stops at an error passed to next, thrown, or rejected, and hands it on", async () => {
    const boom = new Error("boom");
    let reached = false;
    const after: RequestHandler = () => {
      reached = true;
    };
    expect(await outcome([(_q, _s, next) => next(boom), after])).toBe(boom);
    expect(
      await outcome([
        () => {
          throw boom;
        },
        after,
      ]),
    ).toBe(boom);
    expect(await outcome([async () => Promise.reject(boom), after])).toBe(boom);
    expect(reached).toBe(false);
  });

  it("leaves the request to a middleware that answers without calling next", async () => {
    let answered = false;
    const chain = inTurn([
      () => {
        answered = true;
      },
    ]);
    let wentOn = false;
    chain(req, res, () => {
      wentOn = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(true);
    expect(wentOn).toBe(false);
  });
});
