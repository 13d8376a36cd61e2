// The passkey demo's script: every API call and every key goes through the
// client's browser bundle, the way a wallet app would use it.
import {
  createClient,
  otpLogin,
  passkeyCreationOptions,
  passkeyLogin,
  registerPasskey,
  signed,
} from "/sandbox/passkey-demo/client.js";

const $ = (id) => document.getElementById(id);
const { apiBase, rpId } = document.body.dataset;
const state = {};

function log(line) {
  $("log").textContent += `${line}\n`;
}

function api() {
  return createClient({
    baseUrl: `${location.origin}${apiBase}`,
    tokenId: $("token-id").value.trim(),
    secret: $("token-secret").value.trim(),
  });
}

/** The data of a call, or an Error naming the API's answer. */
function ok({ data, error, response }) {
  if (!response.ok) throw new Error(`${response.status} ${error?.code}: ${error?.message}`);
  return data;
}

/** Runs one step; its button is disabled while it runs, the next enabled when it succeeds. */
function step(button, next, work) {
  $(button).addEventListener("click", async () => {
    $(button).disabled = true;
    try {
      await work();
      if (next) $(next).disabled = false;
    } catch (err) {
      log(`✗ ${err.name}: ${err.message}`);
      $(button).disabled = false;
    }
  });
}

// WebAuthn binds a passkey to a domain: on an IP address the browser refuses.
if (location.hostname !== rpId) {
  const here = new URL(location.href);
  here.hostname = rpId;
  $("origin-notice").hidden = false;
  $("origin-notice").textContent =
    `Passkeys of this sandbox belong to "${rpId}" (PASSKEY_RP_ID): open ${here.href} instead.`;
}

step("create-wallet", "register-passkey", async () => {
  const client = api();
  const email = `passkey-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const customer = ok(
    await client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "Grace Hopper", email, currencies: ["USDB"] },
    }),
  );
  const wallets = ok(
    await client.GET("/customers/internal-accounts", {
      params: { query: { customerId: customer.id, type: "EMBEDDED_WALLET" } },
    }),
  );
  state.accountId = wallets.data[0].id;
  state.email = email;
  // The wallet opens with its first credential: EMAIL_OTP on the customer's email.
  const credentials = ok(
    await client.GET("/auth/credentials", { params: { query: { accountId: state.accountId } } }),
  );
  const credential = credentials.data.find((method) => method.type === "EMAIL_OTP");
  state.emailSession = await otpLogin(client, credential.id, { code: "000000" });
  $("wallet-account").textContent = state.accountId;
  log(`✓ wallet ${state.accountId}; email session ${state.emailSession.session.id}`);
});

step("register-passkey", "passkey-login", async () => {
  const { challenge, publicKey } = passkeyCreationOptions({
    userName: state.email,
    rpName: "Payments sandbox",
    rpId,
  });
  const credential = await navigator.credentials.create({ publicKey });
  const method = await registerPasskey(api(), {
    accountId: state.accountId,
    nickname: "This browser",
    challenge,
    credential,
    signer: state.emailSession,
  });
  state.passkeyMethodId = method.id;
  $("passkey-credential").textContent = method.id;
  log(`✓ passkey ${method.id} registered`);
});

step("passkey-login", "sign-action", async () => {
  state.passkeySession = await passkeyLogin(
    api(),
    state.passkeyMethodId,
    (options) => navigator.credentials.get({ publicKey: options }),
    { rpId },
  );
  $("passkey-session").textContent = state.passkeySession.session.id;
  log(`✓ passkey session ${state.passkeySession.session.id}`);
});

step("sign-action", null, async () => {
  const client = api();
  const path = { id: state.accountId };
  const account = await signed(
    (header) =>
      client.PATCH("/internal-accounts/{id}", {
        params: { path, header },
        body: { privateEnabled: true },
      }),
    state.passkeySession,
  );
  $("signed-action").textContent = `privateEnabled: ${account.privateEnabled}`;
  log(`✓ wallet privacy turned on, signed by the passkey session's key`);
});
