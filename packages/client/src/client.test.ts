import { describe, expect, it } from "vitest";
import { createClient } from "./index.js";

function recordingFetch() {
  const requests: Request[] = [];
  const fetch = async (input: Request) => {
    requests.push(input);
    return new Response(JSON.stringify({ data: [], hasMore: false }), {
      status: 200,
      headers: { "Content-Type": "application/json" },
    });
  };
  return { requests, fetch };
}

describe("createClient", () => {
  it("sends Basic credentials as <token id>:<secret>, UTF-8 safe", async () => {
    const { requests, fetch } = recordingFetch();
    const api = createClient({
      baseUrl: "http://sandbox.test/2025-10-13/",
      tokenId: "token-1",
      secret: "sécret:with:colons",
      options: { fetch },
    });
    const { data } = await api.GET("/customers", { params: { query: { limit: 5 } } });
    expect(data).toEqual({ data: [], hasMore: false });
    const req = requests[0]!;
    expect(req.url).toBe("http://sandbox.test/2025-10-13/customers?limit=5");
    const header = req.headers.get("authorization")!;
    expect(header.startsWith("Basic ")).toBe(true);
    expect(Buffer.from(header.slice(6), "base64").toString("utf8")).toBe(
      "token-1:sécret:with:colons",
    );
  });

  it("keeps caller headers beside the credentials", async () => {
    const { requests, fetch } = recordingFetch();
    const api = createClient({
      baseUrl: "http://sandbox.test/2025-10-13",
      tokenId: "t",
      secret: "s",
      options: { fetch, headers: { "X-Caller": "ci" } },
    });
    await api.GET("/customers/internal-accounts", {});
    expect(requests[0]!.headers.get("x-caller")).toBe("ci");
    expect(requests[0]!.headers.get("authorization")).toBe(
      `Basic ${Buffer.from("t:s").toString("base64")}`,
    );
  });
});
