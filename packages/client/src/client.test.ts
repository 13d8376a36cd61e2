import { describe, expect, it } from "vitest";
import { createAgentClient, createClient } from "./index.js";

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

describe("createAgentClient", () => {
  it("sends the agent's access token as a Bearer credential", async () => {
    const { requests, fetch } = recordingFetch();
    const agent = createAgentClient({
      baseUrl: "http://sandbox.test/2025-10-13/",
      accessToken: "agt_token",
      options: { fetch },
    });
    await agent.GET("/agents/me/transactions", {});
    expect(requests[0]!.url).toBe("http://sandbox.test/2025-10-13/agents/me/transactions");
    expect(requests[0]!.headers.get("authorization")).toBe("Bearer agt_token");
  });

  it("sends no credentials without a token, to redeem a device code", async () => {
    const { requests, fetch } = recordingFetch();
    const agent = createAgentClient({
      baseUrl: "http://sandbox.test/2025-10-13",
      options: { fetch },
    });
    await agent.POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code: "BCDF-GHJK-LMNP" } },
    });
    expect(requests[0]!.url).toBe(
      "http://sandbox.test/2025-10-13/agents/device-codes/BCDF-GHJK-LMNP/redeem",
    );
    expect(requests[0]!.headers.has("authorization")).toBe(false);
  });
});
