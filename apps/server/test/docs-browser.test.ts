import { readFileSync, rmSync } from "node:fs";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type TestSandbox } from "./harness.js";
import { launchChromium } from "./support/chromium.js";
import { openApiPath } from "../src/paths.js";
import { parse } from "yaml";

/** The `x-permission` that openapi.yaml gives an operation. */
function xPermissionOf(operationId: string): string {
  const doc = parse(readFileSync(openApiPath, "utf8")) as {
    paths: Record<string, Record<string, { operationId?: string; "x-permission"?: string }>>;
  };
  const operation = Object.values(doc.paths)
    .flatMap((item) => Object.values(item))
    .find((op) => op.operationId === operationId);
  if (operation?.["x-permission"] === undefined) throw new Error(`${operationId} has none`);
  return operation["x-permission"];
}

// The API reference at /docs, read in a real browser that may reach no host but
// the sandbox: any request elsewhere is aborted and recorded, as on a train or
// in air-gapped CI. Each test opens the page afresh, does what a reader does,
// and fails on any request to another host, page error or console error.

interface DocsPage {
  page: Page;
  /** Everything that went wrong while the page was open: empty when all is well. */
  problems: string[];
  /** Every document the tab loaded, as "status URL". */
  documents: string[];
  /** The page's path: /docs or /docs/magic-values. */
  path: string;
}

describe("the API reference in a browser", () => {
  let sandbox: TestSandbox;
  let profile: string;
  let context: BrowserContext;
  const offSite: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox("sqlite");
    ({ context, profile } = await launchChromium("docs"));
    const { origin } = sandbox.server;
    await context.route("**/*", async (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      offSite.push(url);
      return route.abort("internetdisconnected");
    });
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await sandbox?.stop();
  });

  async function openDocs(path = "/docs"): Promise<DocsPage> {
    offSite.length = 0;
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    const documents: string[] = [];
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
    });
    page.on("requestfailed", (req) => {
      if (!offSite.includes(req.url())) problems.push(`failed: ${req.url()}`);
    });
    page.on("response", (res) => {
      if (res.status() >= 400) problems.push(`${res.status()} from ${res.url()}`);
      if (res.request().isNavigationRequest() && res.frame() === page.mainFrame()) {
        documents.push(`${res.status()} ${res.url()}`);
      }
    });
    await page.goto(`${sandbox.server.origin}${path}`);
    // Rendered once the sidebar links to the spec's tags (or the tables' sections) within the page.
    try {
      await (
        path === "/docs"
          ? page.locator('a[href="#/customers"]')
          : page.getByRole("heading", { name: "How values are read" }).first()
      ).waitFor();
    } catch (err) {
      throw new Error(
        `The reference did not render. Requests to other hosts: ${JSON.stringify(offSite)}; ` +
          `problems: ${JSON.stringify(problems)}`,
        { cause: err },
      );
    }
    return { page, problems, documents, path };
  }

  /** Nothing went elsewhere or wrong, and the tab never left the reference. */
  async function expectClean({ page, problems, documents, path }: DocsPage): Promise<void> {
    await page.close();
    expect(offSite, "requests to hosts other than the sandbox").toEqual([]);
    expect(problems).toEqual([]);
    expect(documents).toEqual([`200 ${sandbox.server.origin}${path}`]);
  }

  it("shows the magic-value tables at /docs/magic-values, linked from the reference", async () => {
    const docs = await openDocs();
    await docs.page.locator("#pages").getByRole("link", { name: "Magic values" }).click();
    await docs.page.waitForURL(`${sandbox.server.origin}/docs/magic-values`);
    await docs.page.close();
    const tables = await openDocs("/docs/magic-values");
    const row = tables.page.getByRole("row").filter({ hasText: "verification is rejected" });
    await row.first().waitFor({ state: "visible" });
    expect(await row.first().innerText()).toContain("002");
    await expectClean(tables);
  });

  it("shows the sandbox's own base URL as the server", async () => {
    const docs = await openDocs();
    const servers = docs.page.getByTestId("panel-servers");
    await servers.getByText(sandbox.server.baseUrl, { exact: true }).waitFor();
    expect(await servers.innerText()).not.toContain("localhost:3000");
    await expectClean(docs);
  });

  it("opens a menu group, then an operation in it, without leaving the page", async () => {
    const docs = await openDocs();
    const { page } = docs;
    const menu = page.locator('[data-component-name="Menu/MenuItem"]');

    await menu.locator('a[href="#/customers"]').click();
    await page.waitForURL(`${sandbox.server.origin}/docs#/customers`);
    const operation = menu.locator('a[href="#/customers/createcustomer"]');
    await operation.waitFor({ state: "visible" });

    await operation.click();
    await page.waitForURL(`${sandbox.server.origin}/docs#/customers/createcustomer`);
    const heading = page.getByRole("heading").filter({ hasText: /^Create a customer$/ });
    await heading.waitFor({ state: "visible" });
    await page
      .getByText("Creates an individual or business customer.")
      .waitFor({ state: "visible" });
    // The API token permission the operation needs, as its x-permission says.
    const permission = page
      .locator('[data-component-name="Markdown/Markdown"]')
      .filter({ hasText: /^permission:/ });
    await permission.waitFor({ state: "visible" });
    expect(await permission.innerText()).toMatch(
      new RegExp(`^permission:\\s+${xPermissionOf("createCustomer")}$`),
    );
    await expectClean(docs);
  });

  it("finds an operation by search and opens it", async () => {
    const docs = await openDocs();
    const { page } = docs;

    await page.getByTestId("search-trigger").click();
    await page.getByTestId("search-dialog").locator("input").fill("List customers");
    const result = page
      .locator('[data-component-name="Search/SearchItem"]')
      .filter({ hasText: "List customers" })
      .first();
    await result.waitFor({ state: "visible" });
    expect(await result.getAttribute("href")).toBe("#/customers/listcustomers");

    await result.click();
    await page.waitForURL(`${sandbox.server.origin}/docs#/customers/listcustomers`);
    await page
      .getByRole("heading")
      .filter({ hasText: /^List customers$/ })
      .waitFor();
    await expectClean(docs);
  });
});
