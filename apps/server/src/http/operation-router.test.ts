import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { openApiPath } from "../paths.js";
import { onePathDocument, PathTree, type ApiDocument } from "./operation-router.js";

const doc = parse(readFileSync(openApiPath, "utf8")) as ApiDocument;

describe("PathTree", () => {
  const tree = new PathTree([
    "/cards",
    "/cards/{id}",
    "/cards/{id}/reveal",
    "/cards/primary",
    "/agents/device-codes/{code}/redeem",
  ]);

  it("finds each path by its segments, a literal segment before a parameter", () => {
    expect(tree.match("/cards")).toBe("/cards");
    expect(tree.match("/cards/Card:1")).toBe("/cards/{id}");
    expect(tree.match("/cards/primary")).toBe("/cards/primary");
    expect(tree.match("/cards/primary/reveal")).toBe("/cards/{id}/reveal");
    expect(tree.match("/agents/device-codes/abc/redeem")).toBe(
      "/agents/device-codes/{code}/redeem",
    );
  });

  it("matches nothing else: extra, missing or empty segments", () => {
    expect(tree.match("/cards/")).toBeUndefined();
    expect(tree.match("/cards//reveal")).toBeUndefined();
    expect(tree.match("/cards/1/reveal/x")).toBeUndefined();
    expect(tree.match("/agents/device-codes/abc")).toBeUndefined();
    expect(tree.match("/nothing")).toBeUndefined();
  });

  it("refuses two paths that would match the same requests", () => {
    expect(() => new PathTree(["/cards/{id}", "/cards/{cardId}"])).toThrow(/two paths/);
  });

  it("routes every path of openapi.yaml to itself", () => {
    const paths = Object.keys(doc.paths);
    const all = new PathTree(paths);
    for (const path of paths) {
      const sample = path.replace(/\{[^}]+\}/g, "Sample:1");
      expect(all.match(sample), path).toBe(path);
    }
  });
});

describe("onePathDocument", () => {
  it("keeps one path and every component, so each reference resolves inside the copy", () => {
    const one = onePathDocument(doc, "/customers");
    expect(Object.keys(one.paths)).toEqual(["/customers"]);
    const text = JSON.stringify(one);
    for (const [, kind, name] of text.matchAll(/"#\/components\/([^/"]+)\/([^"]+)"/g)) {
      expect(one.components?.[kind!]?.[name!], `${kind}/${name}`).toBeDefined();
    }
    expect(one.components).toEqual(doc.components);
  });

  it("is a copy: changing it leaves the document as it was", () => {
    const one = onePathDocument(doc, "/customers");
    (one.paths["/customers"] as Record<string, unknown>).get = null;
    expect(doc.paths["/customers"]?.get).not.toBeNull();
  });
});
