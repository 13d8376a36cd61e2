import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "@payments-sandbox/client";
import {
  CONTACT_VERIFICATION_CODE_SECONDS,
  CONTACT_VERIFICATION_CODE_TABLE,
  CONTACT_VERIFICATION_MAX_ATTEMPTS,
  SANDBOX_CONTACT_VERIFICATION_CODE,
} from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { withId } from "./money-helpers.js";

const WRONG_CODE = "654321";

type Channel = "email" | "phone";

describe.each(databases)("contact verification on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  let serial = 0;
  /** An individual customer; French (in the EEA) with an email address and a phone number unless told otherwise. */
  async function customer(
    extra: { region?: string; email?: string | null; phoneNumber?: string | null } = {},
    client: SandboxClient = sandbox.client,
  ) {
    serial += 1;
    const email = extra.email === undefined ? `camille.${serial}@example.fr` : extra.email;
    const phoneNumber = extra.phoneNumber === undefined ? "+33612345678" : extra.phoneNumber;
    const { data, error } = await client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Camille Martin",
        region: extra.region ?? "FR",
        ...(email !== null ? { email } : {}),
        ...(phoneNumber !== null ? { phoneNumber } : {}),
      },
    });
    if (!data) throw new Error(`customer not created: ${JSON.stringify(error)}`);
    return withId(data);
  }

  const send = (channel: Channel, customerId: string, client = sandbox.client) =>
    channel === "email"
      ? client.POST("/customers/{customerId}/verify-email", { params: { path: { customerId } } })
      : client.POST("/customers/{customerId}/verify-phone", { params: { path: { customerId } } });
  const confirm = (channel: Channel, customerId: string, code: string, client = sandbox.client) =>
    channel === "email"
      ? client.POST("/customers/{customerId}/verify-email/confirm", {
          params: { path: { customerId } },
          body: { code },
        })
      : client.POST("/customers/{customerId}/verify-phone/confirm", {
          params: { path: { customerId } },
          body: { code },
        });
  const statusOf = async (customerId: string) =>
    (await sandbox.client.GET("/customers/{customerId}", { params: { path: { customerId } } })).data
      ?.contactVerification;

  it("covers the contact verification code table: the sandbox code is its one row", () => {
    expect(CONTACT_VERIFICATION_CODE_TABLE.rows.map((row) => row.match)).toEqual([
      SANDBOX_CONTACT_VERIFICATION_CODE,
    ]);
    expect(SANDBOX_CONTACT_VERIFICATION_CODE).toBe("123456");
  });

  it("shows contactVerification only where it is required, with only the channels the customer has", async () => {
    expect((await customer()).contactVerification).toEqual({ email: "PENDING", phone: "PENDING" });
    expect((await customer({ phoneNumber: null })).contactVerification).toEqual({
      email: "PENDING",
    });
    expect(await customer({ region: "US" })).not.toHaveProperty("contactVerification");
    expect(await customer({ email: null, phoneNumber: null })).not.toHaveProperty(
      "contactVerification",
    );
  });

  for (const channel of ["email", "phone"] as const) {
    it(`verifies the ${channel} with the sandbox code, answering the customer`, async () => {
      const { id } = await customer();
      const sent = await send(channel, id);
      expect(sent.response.status).toBe(204);
      const { data, response } = await confirm(channel, id, SANDBOX_CONTACT_VERIFICATION_CODE);
      expect(response.status).toBe(200);
      const other = channel === "email" ? "phone" : "email";
      expect(data?.contactVerification).toEqual({ [channel]: "VERIFIED", [other]: "PENDING" });
      expect(data?.id).toBe(id);
      expect(await statusOf(id)).toEqual(data?.contactVerification);

      // Nothing left to verify on this channel: 409 (seed rule 10).
      for (const answer of [
        await send(channel, id),
        await confirm(channel, id, SANDBOX_CONTACT_VERIFICATION_CODE),
      ]) {
        expect(answer.response.status).toBe(409);
        expect(answer.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
      }
    });
  }

  it("answers 409 where no verification is required: outside the EEA, or without the contact detail", async () => {
    const american = await customer({ region: "US" });
    const noPhone = await customer({ phoneNumber: null });
    for (const answer of [
      await send("email", american.id),
      await confirm("email", american.id, SANDBOX_CONTACT_VERIFICATION_CODE),
      await send("phone", american.id),
      await send("phone", noPhone.id),
      await confirm("phone", noPhone.id, SANDBOX_CONTACT_VERIFICATION_CODE),
    ]) {
      expect(answer.response.status).toBe(409);
      expect(answer.error).toMatchObject({ status: 409, code: "CONFLICT" });
    }
  });

  it("refuses a wrong code with 400 INVALID_INPUT, counting down the attempts left", async () => {
    const { id } = await customer();
    await send("email", id);
    const wrong = await confirm("email", id, WRONG_CODE);
    expect(wrong.response.status).toBe(400);
    expect(wrong.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { attemptsLeft: CONTACT_VERIFICATION_MAX_ATTEMPTS - 1 },
    });
    expect(await statusOf(id)).toEqual({ email: "PENDING", phone: "PENDING" });
    // A wrong code before the last attempt leaves the code usable.
    const right = await confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE);
    expect(right.data?.contactVerification?.email).toBe("VERIFIED");
  });

  it(`makes a code void after ${CONTACT_VERIFICATION_MAX_ATTEMPTS} wrong attempts; a new one works`, async () => {
    const { id } = await customer();
    await send("phone", id);
    const left: unknown[] = [];
    for (let i = 0; i < CONTACT_VERIFICATION_MAX_ATTEMPTS; i++) {
      left.push((await confirm("phone", id, WRONG_CODE)).error?.details?.attemptsLeft);
    }
    expect(left).toEqual([4, 3, 2, 1, 0]);
    const spent = await confirm("phone", id, SANDBOX_CONTACT_VERIFICATION_CODE);
    expect(spent.response.status).toBe(400);
    expect(spent.error).toMatchObject({
      code: "INVALID_INPUT",
      details: { errors: [{ field: "code" }] },
    });
    expect(spent.error?.message).toMatch(/No phone number verification code is pending/);

    expect((await send("phone", id)).response.status).toBe(204);
    expect((await confirm("phone", id, SANDBOX_CONTACT_VERIFICATION_CODE)).response.status).toBe(
      200,
    );
  });

  it("refuses a confirmation before any code was sent", async () => {
    const { id } = await customer();
    const early = await confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE);
    expect(early.response.status).toBe(400);
    expect(early.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("lets a code expire on the sandbox clock; sending again starts a new one", async () => {
    const { id } = await customer();
    await send("email", id);
    await sandbox.client.POST("/sandbox/clock/advance", {
      body: { seconds: CONTACT_VERIFICATION_CODE_SECONDS + 1 },
    });
    const late = await confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE);
    expect(late.response.status).toBe(400);
    expect(late.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect(late.error?.message).toMatch(/expired/);

    await send("email", id);
    const fresh = await confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE);
    expect(fresh.data?.contactVerification?.email).toBe("VERIFIED");
  });

  it("makes a changed email address PENDING again, and voids a code sent to the old one", async () => {
    const { id } = await customer({ phoneNumber: null });
    await send("email", id);
    await confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE);
    const patch = (email: string) =>
      sandbox.client.PATCH("/customers/{customerId}", {
        params: { path: { customerId: id } },
        body: { customerType: "INDIVIDUAL", email },
      });
    expect((await patch("camille.new@example.fr")).response.status).toBe(200);
    expect(await statusOf(id)).toEqual({ email: "PENDING" });

    // A code sent to one address does not confirm the next.
    await send("email", id);
    await patch("camille.newer@example.fr");
    const stale = await confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE);
    expect(stale.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect(await statusOf(id)).toEqual({ email: "PENDING" });
  });

  it("answers 404 for another platform's customer and for a deleted one", async () => {
    const other = await sandbox.otherPlatformClient();
    const theirs = await customer({}, other);
    const deleted = await customer();
    await sandbox.client.DELETE("/customers/{customerId}", {
      params: { path: { customerId: deleted.id } },
    });
    for (const answer of [
      await send("email", theirs.id),
      await confirm("phone", theirs.id, SANDBOX_CONTACT_VERIFICATION_CODE),
      await send("email", deleted.id),
    ]) {
      expect(answer.response.status).toBe(404);
      expect(answer.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
    }
  });

  it("verifies once when the right code arrives twice at the same time", async () => {
    const { id } = await customer();
    await send("email", id);
    const answers = await Promise.all([
      confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE),
      confirm("email", id, SANDBOX_CONTACT_VERIFICATION_CODE),
    ]);
    const statuses = answers.map((answer) => answer.response.status).sort();
    // The loser finds the code consumed (400), or the address already verified (409).
    expect(statuses[0]).toBe(200);
    expect([400, 409]).toContain(statuses[1]);
    expect(await statusOf(id)).toEqual({ email: "VERIFIED", phone: "PENDING" });
  });
});
