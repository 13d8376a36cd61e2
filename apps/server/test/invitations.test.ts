import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import {
  INVITATION_CONFIGURATION_TABLE,
  SANDBOX_DEFAULT_UMA_DOMAIN,
} from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { startReceiver, waitFor, type WebhookReceiver } from "./webhook-receiver.js";

type Invitation = Schemas["UmaInvitation"];

const FAST = {
  WEBHOOK_RETRY_BASE_MS: "100",
  WEBHOOK_RETRY_MAX_DELAY_MS: "400",
  WEBHOOK_POLL_MS: "50",
};
const DOMAIN = "wallet.example.com";

/** A customer of the client's platform; its UMA address defaults from the platform's domain. */
async function inviter(client: SandboxClient, platformCustomerId: string) {
  const { data, error } = await client.POST("/customers", {
    body: {
      customerType: "INDIVIDUAL",
      platformCustomerId,
      fullName: "Jane Inviter",
      email: `${platformCustomerId}@example.com`,
    },
  });
  if (!data) throw new Error(`customer not created: ${JSON.stringify(error)}`);
  return data;
}

async function setUmaDomain(client: SandboxClient, umaDomain: string) {
  const { data, response } = await client.PATCH("/config", { body: { umaDomain } });
  expect(response.status).toBe(200);
  expect(data?.umaDomain).toBe(umaDomain);
}

/** The events of the platform's log about one invitation, oldest first. */
async function eventsAbout(client: SandboxClient, code: string) {
  const { data, error } = await client.GET("/sandbox/webhooks/events", {
    params: { query: { objectId: code, limit: 100 } },
  });
  if (!data) throw new Error(`event log: ${JSON.stringify(error)}`);
  return data.data.reverse();
}

describe.each(databases)("UMA invitations on %s", (kind) => {
  let sandbox: TestSandbox;
  let receiver: WebhookReceiver;
  let inviterUma: string;

  beforeAll(async () => {
    sandbox = await startSandbox(kind, { env: FAST });
    receiver = await startReceiver();
    await sandbox.client.PATCH("/config", { body: { webhookEndpoint: receiver.url } });
    await setUmaDomain(sandbox.client, DOMAIN);
    inviterUma = (await inviter(sandbox.client, "jane")).umaAddress;
  });
  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.close();
  });

  const create = (body: Schemas["UmaInvitationCreateRequest"], client = sandbox.client) =>
    client.POST("/invitations", { body });
  const get = (invitationCode: string, client = sandbox.client) =>
    client.GET("/invitations/{invitationCode}", { params: { path: { invitationCode } } });
  const claim = (invitationCode: string, inviteeUma: string, client = sandbox.client) =>
    client.POST("/invitations/{invitationCode}/claim", {
      params: { path: { invitationCode } },
      body: { inviteeUma },
    });
  const cancel = (invitationCode: string, client = sandbox.client) =>
    client.POST("/invitations/{invitationCode}/cancel", { params: { path: { invitationCode } } });

  async function pending(body: Partial<Schemas["UmaInvitationCreateRequest"]> = {}) {
    const { data, error } = await create({ inviterUma, ...body });
    if (!data) throw new Error(`invitation not created: ${JSON.stringify(error)}`);
    return data;
  }

  it("covers the invitation configuration table: the placeholder domain is its one row", () => {
    expect(INVITATION_CONFIGURATION_TABLE.rows.map((row) => row.match)).toEqual([
      SANDBOX_DEFAULT_UMA_DOMAIN,
    ]);
  });

  it("answers INVITATIONS_NOT_CONFIGURED while the platform keeps the placeholder UMA domain", async () => {
    const other = await sandbox.otherPlatformClient();
    const config = await other.GET("/config");
    // A new platform starts on the placeholder (the schema's default is the rule's value).
    expect(config.data?.umaDomain).toBe(SANDBOX_DEFAULT_UMA_DOMAIN);
    const customer = await inviter(other, "omar");
    expect(customer.umaAddress).toBe(`$omar@${SANDBOX_DEFAULT_UMA_DOMAIN}`);

    const refused = await create({ inviterUma: customer.umaAddress }, other);
    expect(refused.response.status).toBe(400);
    expect(refused.error).toMatchObject({ status: 400, code: "INVITATIONS_NOT_CONFIGURED" });

    // Its own domain configures invitations; the url is a link on it.
    await setUmaDomain(other, "pay.example.org");
    const made = await create({ inviterUma: customer.umaAddress }, other);
    expect(made.response.status).toBe(201);
    expect(made.data?.url).toBe(`https://pay.example.org/i/${made.data?.code}`);

    // Back on the placeholder, it is not configured again.
    await setUmaDomain(other, SANDBOX_DEFAULT_UMA_DOMAIN);
    expect((await create({ inviterUma: customer.umaAddress }, other)).error).toMatchObject({
      code: "INVITATIONS_NOT_CONFIGURED",
    });
  });

  it("creates a PENDING invitation from a customer, with its amount in the inviter's currency", async () => {
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const { data, response } = await create({
      // UMA addresses are case-insensitive.
      inviterUma: inviterUma.toUpperCase(),
      firstName: "Jane",
      amountToSend: 2500,
      expiresAt,
    });
    expect(response.status).toBe(201);
    expect(data?.code).toMatch(/^[0-9a-f]{12}$/);
    expect(data).toEqual({
      code: data?.code,
      createdAt: expect.any(String),
      url: `https://${DOMAIN}/i/${data?.code}`,
      expiresAt,
      inviterUma,
      status: "PENDING",
      firstName: "Jane",
      amountToSend: {
        amount: 2500,
        currency: { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 },
      },
    });
    expect(inviterUma).toBe(`$jane@${DOMAIN}`);
    expect((await get(data!.code)).data).toEqual(data);
    // Creating sends nothing.
    expect(await eventsAbout(sandbox.client, data!.code)).toEqual([]);
  });

  it("refuses an inviter that is not a UMA address or not one of the platform's customers, and a past expiry", async () => {
    const malformed = await create({ inviterUma: "jane@example.com" });
    expect(malformed.error).toMatchObject({ status: 400, code: "INVALID_UMA_ADDRESS" });
    const stranger = await create({ inviterUma: `$nobody@${DOMAIN}` });
    expect(stranger.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { errors: [{ field: "inviterUma" }] },
    });
    const past = await create({ inviterUma, expiresAt: new Date(Date.now() - 1000).toISOString() });
    expect(past.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { errors: [{ field: "expiresAt" }] },
    });
    const zero = await create({ inviterUma, amountToSend: 0 });
    expect(zero.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("claims: CLAIMED with the invitee, and INVITATION.CLAIMED is logged and delivered, signed", async () => {
    const invitation = await pending({ amountToSend: 1000 });
    const { data, response } = await claim(invitation.code, "$Sam.Lee@pay.example.org");
    expect(response.status).toBe(200);
    expect(data).toEqual({
      ...invitation,
      status: "CLAIMED",
      inviteeUma: "$sam.lee@pay.example.org",
      claimedAt: expect.any(String),
    });
    expect((await get(invitation.code)).data).toEqual(data);

    const events = await eventsAbout(sandbox.client, invitation.code);
    expect(events.map((event) => event.type)).toEqual(["INVITATION.CLAIMED"]);
    const event = events[0]!;
    expect(event.payload).toEqual({
      id: event.id,
      type: "INVITATION.CLAIMED",
      timestamp: data?.claimedAt,
      data,
    });

    await waitFor("the claim's webhook", () => receiver.delivered().includes(event.id));
    const delivered = receiver.requests.find((request) => request.eventId === event.id)!;
    const pem = (await sandbox.client.GET("/sandbox/keys")).data!.webhookPublicKey;
    expect(verifyWebhook(delivered.rawBody, delivered.signature, pem)).toBe(true);
    expect(JSON.parse(delivered.rawBody)).toEqual(event.payload);
  });

  it("refuses a second claim and a cancel of a claimed invitation with INVITATION_ALREADY_CLAIMED", async () => {
    const invitation = await pending();
    expect((await claim(invitation.code, "$first@pay.example.org")).response.status).toBe(200);
    const again = await claim(invitation.code, "$second@pay.example.org");
    expect(again.response.status).toBe(400);
    expect(again.error).toMatchObject({ status: 400, code: "INVITATION_ALREADY_CLAIMED" });
    expect((await cancel(invitation.code)).error).toMatchObject({
      status: 400,
      code: "INVITATION_ALREADY_CLAIMED",
    });
    // The first claim stands, with its one event.
    expect((await get(invitation.code)).data?.inviteeUma).toBe("$first@pay.example.org");
    expect((await eventsAbout(sandbox.client, invitation.code)).length).toBe(1);
  });

  it("cancels a PENDING invitation, which then refuses claims and cancels with INVITATION_CANCELLED", async () => {
    const invitation = await pending();
    const { data, response } = await cancel(invitation.code);
    expect(response.status).toBe(200);
    expect(data).toEqual({ ...invitation, status: "CANCELLED" });
    expect((await get(invitation.code)).data?.status).toBe("CANCELLED");
    const claimed = await claim(invitation.code, "$late@pay.example.org");
    expect(claimed.response.status).toBe(400);
    expect(claimed.error).toMatchObject({ status: 400, code: "INVITATION_CANCELLED" });
    expect((await cancel(invitation.code)).error).toMatchObject({ code: "INVITATION_CANCELLED" });
    expect(await eventsAbout(sandbox.client, invitation.code)).toEqual([]);
  });

  it("answers 404 INVITATION_NOT_FOUND for an unknown code", async () => {
    for (const answer of [
      await get("0123456789ab"),
      await claim("0123456789ab", "$sam@pay.example.org"),
      await cancel("0123456789ab"),
    ]) {
      expect(answer.response.status).toBe(404);
      expect(answer.error).toMatchObject({ status: 404, code: "INVITATION_NOT_FOUND" });
    }
  });

  it("refuses a malformed invitee and the inviter's own address, leaving the invitation PENDING", async () => {
    const invitation = await pending();
    expect((await claim(invitation.code, "sam")).error).toMatchObject({
      status: 400,
      code: "INVALID_UMA_ADDRESS",
    });
    expect((await claim(invitation.code, inviterUma.toUpperCase())).error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { errors: [{ field: "inviteeUma" }] },
    });
    expect((await get(invitation.code)).data?.status).toBe("PENDING");
  });

  it("expires on the platform's sandbox clock: EXPIRED, then neither claimable nor cancellable", async () => {
    const { data: clock } = await sandbox.client.GET("/sandbox/clock");
    const expiresAt = new Date(Date.parse(clock!.now) + 60_000).toISOString();
    const invitation = await pending({ expiresAt });
    const open = await pending();
    await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 61 } });

    expect((await get(invitation.code)).data).toEqual({ ...invitation, status: "EXPIRED" });
    for (const answer of [
      await claim(invitation.code, "$late@pay.example.org"),
      await cancel(invitation.code),
    ]) {
      expect(answer.response.status).toBe(400);
      expect(answer.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        details: { expiresAt },
      });
    }
    // Without expiresAt an invitation never expires.
    expect((await get(open.code)).data?.status).toBe("PENDING");
    expect(await eventsAbout(sandbox.client, invitation.code)).toEqual([]);
  });

  it("lets another platform read and claim an invitation, tells the inviting platform, and refuses its cancel with 403", async () => {
    const other = await sandbox.otherPlatformClient();
    const invitation = await pending();
    expect((await get(invitation.code, other)).data).toEqual(invitation);
    const refused = await cancel(invitation.code, other);
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({ status: 403, code: "FORBIDDEN" });

    const { data } = await claim(invitation.code, "$omar@pay.example.org", other);
    expect(data?.status).toBe("CLAIMED");
    // The event belongs to the platform that created the invitation.
    expect((await eventsAbout(sandbox.client, invitation.code)).map((e) => e.type)).toEqual([
      "INVITATION.CLAIMED",
    ]);
    expect(await eventsAbout(other, invitation.code)).toEqual([]);
  });

  it("lets exactly one of two concurrent claims win, with one event", async () => {
    const invitation = await pending();
    const answers = await Promise.all([
      claim(invitation.code, "$one@pay.example.org"),
      claim(invitation.code, "$two@pay.example.org"),
    ]);
    const won = answers.filter((answer) => answer.response.status === 200);
    const lost = answers.filter((answer) => answer.response.status === 400);
    expect(won.length).toBe(1);
    expect(lost.map((answer) => answer.error?.code)).toEqual(["INVITATION_ALREADY_CLAIMED"]);
    const stored: Invitation | undefined = (await get(invitation.code)).data;
    expect(stored?.inviteeUma).toBe(won[0]!.data?.inviteeUma);
    const events = await eventsAbout(sandbox.client, invitation.code);
    expect(events.map((event) => event.payload.data)).toEqual([stored]);
  });
});
