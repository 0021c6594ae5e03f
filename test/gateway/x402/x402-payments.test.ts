/**
 * Pay on 402, end to end on a local chain: a Hardhat node with an EIP-3009 stablecoin compiled
 * from source, a facilitator on 127.0.0.1 running the protocol's own facilitator code, the
 * gateway with x402 on, and a client that pays with a viem wallet through @x402/core's client
 * (what an x402 client library does: read PAYMENT-REQUIRED, sign, retry with PAYMENT-SIGNATURE).
 */
import { test, before, after, beforeEach, describe } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { parseSignature, type Address, type Hex } from 'viem';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import Anthropic from '@anthropic-ai/sdk';
import { startEvmNode, type EvmNode } from '../../helpers/evm-node.js';
import { startRpcProxy, type JsonRpcCall, type RpcProxy } from '../../helpers/rpc-proxy.js';
import { settlementState, type SettlementQuery } from '../../../gateway/x402/settlement-reads.js';
import { compileContracts } from '../../helpers/solidity.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { startTestFacilitator, type TestFacilitator } from '../../fixtures/x402/test-facilitator.js';
import { apiKeyFor, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, startChatGateway } from '../chat/chat-harness.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { NO_KEY_LIMITS, type KeyLimits } from '../../../gateway/ledger/key-budgets.js';

const NETWORK = 'eip155:31337';
const UNITS_PER_CREDIT = 10_000n; // 0.01 TUSD (6 decimals) per credit
const TOP_UP = 100n; // the smallest top-up offered, in credits

let node: EvmNode;
let token: Address;
let tokenAbi: readonly unknown[];
let facilitator: TestFacilitator;
let upstream: ScriptedUpstream;
let gateway: TestGateway;
const payTo = privateKeyToAccount(generatePrivateKey()).address;

before(async () => {
  node = await startEvmNode();
  const { Eip3009Token } = compileContracts();
  tokenAbi = Eip3009Token.abi;
  token = await node.deploy(Eip3009Token, ['Test USD', '2']);
  facilitator = await startTestFacilitator(node.wallet(1), NETWORK);
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.x402 = x402Settings();
    },
  });
});
/**
 * The gateway's x402 section: this chain's token, the test facilitator, a fast reconciler, and a settle
 * timeout long enough for a real settlement on a busy machine (the tests that need it to pass hold the
 * facilitator's /settle instead of racing it).
 */
function x402Settings(): Record<string, unknown> {
  return {
    facilitatorUrl: facilitator.url,
    payTo,
    assets: [
      { network: NETWORK, address: token, name: 'Test USD', version: '2', unitsPerCredit: String(UNITS_PER_CREDIT), rpcUrl: node.url },
    ],
    topUpCredits: [Number(TOP_UP), 1000],
    verifyTimeoutMs: 4_000,
    settleTimeoutMs: 5_000,
    reconcileIntervalMs: 250,
  };
}

after(async () => {
  await gateway?.stop();
  await facilitator?.stop().catch(() => {});
  await upstream?.close();
  await node?.stop();
});
beforeEach(() => upstream.reset());

const ask = { model: 'conductor', messages: [{ role: 'user' as const, content: 'Hello.' }] };

interface Payer {
  account: PrivateKeyAccount;
  wallet: string;
  key: string;
  /** The gateway it pays (the embedded one, or the cluster-mode one). */
  gateway: TestGateway;
}

/** A fresh payer holding 1000 TUSD (and no ETH: the facilitator pays the gas), with a verified key of `gw` and no credits. */
async function fundedPayer(gw = gateway): Promise<Payer> {
  const account = privateKeyToAccount(generatePrivateKey());
  const hash = await node
    .wallet(0)
    .writeContract({ address: token, abi: tokenAbi, functionName: 'mint', args: [account.address, 1_000_000_000n] });
  await node.publicClient.waitForTransactionReceipt({ hash });
  const wallet = account.address.toLowerCase();
  return { account, wallet, key: await apiKeyFor(gw, wallet), gateway: gw };
}

interface Exchange {
  status: number;
  headers: Headers;
  body: unknown;
}

/** @x402/core's HTTP client with the `exact` EVM scheme on every eip155 chain; spend controls off (the test token is no default asset). */
function x402HttpClient(signer: PrivateKeyAccount): x402HTTPClient {
  return new x402HTTPClient(
    x402Client.fromConfig({ schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(signer) }], spendControls: false }),
  );
}

/**
 * What an x402 client library does around fetch: on a 402 with PAYMENT-REQUIRED, sign one of the
 * offers with the wallet and send the same request again with PAYMENT-SIGNATURE. `tamper` edits
 * the offer before signing, or the payload after, to play a wrong client.
 */
function payingFetch(
  signer: PrivateKeyAccount,
  seen: Exchange[],
  tamper: { offer?: (required: any) => void; payload?: (payload: any) => void } = {},
): typeof fetch {
  const http = x402HttpClient(signer);
  const record = async (response: Response) => {
    // JSON answers are read (a copy); an event stream is left to its reader.
    const body = response.headers.get('content-type')?.includes('json') ? await response.clone().json() : undefined;
    seen.push({ status: response.status, headers: response.headers, body });
    return response;
  };
  return async (input, init) => {
    const first = await record(await fetch(input, init));
    if (first.status !== 402 || !first.headers.get('payment-required')) return first;
    const required = http.getPaymentRequiredResponse((name) => first.headers.get(name), seen.at(-1)?.body);
    tamper.offer?.(required);
    const payload = await http.createPaymentPayload(required);
    tamper.payload?.(payload);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(http.encodePaymentSignatureHeader(payload))) headers.set(name, value);
    return record(await fetch(input, { ...init, headers }));
  };
}

/** A chat with the official client, paying on 402; the exchanges and the outcome. */
async function payingChat(payer: Payer, signer = payer.account, tamper = {}) {
  const seen: Exchange[] = [];
  const openai = openaiFor(payer.gateway, payer.key, payer.wallet);
  const paying = openai.withOptions({ fetch: payingFetch(signer, seen, tamper) });
  const outcome = await paying.chat.completions.create(ask).then(
    (completion) => ({ completion, error: undefined }),
    (error: { status?: number; error?: { code?: string; message?: string } }) => ({ completion: undefined, error }),
  );
  return { seen, ...outcome };
}

function decode(header: string | null): any {
  assert.ok(header, 'the header is present');
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
}

async function tokenBalance(owner: string): Promise<bigint> {
  return (await node.publicClient.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [owner] })) as bigint;
}

async function authorizationUsed(authorizer: string, nonce: Hex): Promise<boolean> {
  return (await node.publicClient.readContract({
    address: token,
    abi: tokenAbi,
    functionName: 'authorizationState',
    args: [authorizer, nonce],
  })) as boolean;
}

test('an empty wallet gets a 402 offer, pays it, and its chat is served in the same round trip, credited once', async () => {
  const payer = await fundedPayer();
  const payToBefore = await tokenBalance(payTo);
  upstream.script({ text: 'Paid and answered.', usage: { prompt_tokens: 10, completion_tokens: 5 } });
  const { seen, completion, error } = await payingChat(payer);
  assert.equal(error, undefined);
  assert.equal(completion?.choices[0].message.content, 'Paid and answered.');
  assert.equal(seen.length, 2, 'one 402, then the paid retry');

  // The offer: the usual OpenAI error body, and x402 v2 in PAYMENT-REQUIRED.
  const [offer, paid] = seen;
  assert.equal(offer.status, 402);
  const body = offer.body as { error: { code: string; type: string; message: string } };
  assert.equal(body.error.code, 'insufficient_credits');
  assert.equal(body.error.type, 'insufficient_credits_error');
  const needed = BigInt(/needs at least (\d+)/.exec(body.error.message)![1]);
  const required = decode(offer.headers.get('payment-required'));
  assert.equal(required.x402Version, 2);
  assert.equal(required.resource.url, `${gateway.config.server.publicUrl}/v1/chat/completions`);
  const smallest = needed > TOP_UP ? needed : TOP_UP;
  assert.deepEqual(required.accepts, [
    {
      scheme: 'exact',
      network: NETWORK,
      amount: String(smallest * UNITS_PER_CREDIT),
      asset: token,
      payTo,
      maxTimeoutSeconds: 300,
      extra: { name: 'Test USD', version: '2' },
    },
    ...(smallest < 1000n
      ? [
          {
            scheme: 'exact',
            network: NETWORK,
            amount: String(1000n * UNITS_PER_CREDIT),
            asset: token,
            payTo,
            maxTimeoutSeconds: 300,
            extra: { name: 'Test USD', version: '2' },
          },
        ]
      : []),
  ]);

  // The paid retry: settled on chain by the facilitator, credited, served, with PAYMENT-RESPONSE.
  assert.equal(paid.status, 200);
  const settlement = decode(paid.headers.get('payment-response'));
  assert.equal(settlement.success, true);
  assert.equal(settlement.network, NETWORK);
  assert.equal(settlement.payer, payer.wallet);
  assert.match(settlement.transaction, /^0x[0-9a-f]{64}$/);
  const receipt = await node.publicClient.getTransactionReceipt({ hash: settlement.transaction });
  assert.equal(receipt.status, 'success');
  assert.equal(receipt.from.toLowerCase(), node.accounts[1].address.toLowerCase(), 'the facilitator sent it, not the gateway');
  assert.equal((await tokenBalance(payTo)) - payToBefore, smallest * UNITS_PER_CREDIT);
  const balance = await gateway.ledger.balance(payer.wallet);
  assert.equal(balance.total_deposited, Number(smallest));
  assert.equal(balance.total_spent, 1);
  assert.equal(paid.headers.get('x-credits-remaining'), String(Number(smallest) - 1));
  // The top-up and the chat it paid for, each with its usage record.
  assert.deepEqual(
    (await usageOf(payer)).map((r) => [r.kind, r.credits, r.key_id === null, r.source_id === null]),
    [
      ['chat', 1, false, true],
      ['x402', Number(smallest), true, false],
    ],
  );
});

/** The payer's usage records, newest first (GET /credits/usage). */
async function usageOf(payer: Payer): Promise<Array<{ kind: string; credits: number; key_id: string | null; source_id: string | null }>> {
  const res = await fetch(`${payer.gateway.url}/credits/usage`, { headers: authHeaders(payer.key, payer.wallet) });
  assert.equal(res.status, 200);
  return ((await res.json()) as { data: Array<{ kind: string; credits: number; key_id: string | null; source_id: string | null }> }).data;
}

test("a streamed chat pays the same way: PAYMENT-RESPONSE comes with the stream's headers", async () => {
  const payer = await fundedPayer();
  upstream.script({ text: 'Streamed after paying.' });
  const seen: Exchange[] = [];
  const openai = openaiFor(gateway, payer.key, payer.wallet).withOptions({ fetch: payingFetch(payer.account, seen) });
  const stream = await openai.chat.completions.create({ ...ask, stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  assert.equal(text, 'Streamed after paying.');
  assert.deepEqual(
    seen.map((e) => e.status),
    [402, 200],
  );
  assert.equal(decode(seen[1].headers.get('payment-response')).success, true);
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
});

test('POST /v1/responses pays the same way (responses.create with the paying fetch)', async () => {
  const payer = await fundedPayer();
  upstream.script({ text: 'A paid response.' });
  const seen: Exchange[] = [];
  const openai = openaiFor(gateway, payer.key, payer.wallet).withOptions({ fetch: payingFetch(payer.account, seen) });
  const response = await openai.responses.create({ model: ask.model, input: 'Say something.' });
  assert.equal(response.output_text, 'A paid response.');
  assert.deepEqual(
    seen.map((e) => e.status),
    [402, 200],
  );
  assert.equal(decode(seen[0].headers.get('payment-required')).resource.url, `${gateway.config.server.publicUrl}/v1/responses`);
  assert.equal(decode(seen[1].headers.get('payment-response')).success, true);
  const balance = await gateway.ledger.balance(payer.wallet);
  assert.equal(balance.total_deposited, Number(TOP_UP));
  assert.equal(balance.credits + balance.total_spent, Number(TOP_UP));
});

test('POST /v1/messages pays the same way: the 402 in the Anthropic shape carries the offer (messages.create with the paying fetch)', async () => {
  const payer = await fundedPayer();
  upstream.script({ text: 'A paid message.' });
  const seen: Exchange[] = [];
  const anthropic = new Anthropic({
    baseURL: gateway.url,
    apiKey: payer.key,
    defaultHeaders: { 'x-wallet-address': payer.wallet },
    maxRetries: 0,
    fetch: payingFetch(payer.account, seen),
  });
  const message = await anthropic.messages.create({ model: ask.model, max_tokens: 100, messages: ask.messages });
  assert.deepEqual(message.content, [{ type: 'text', text: 'A paid message.' }]);
  assert.deepEqual(
    seen.map((e) => e.status),
    [402, 200],
  );
  const refused = seen[0].body as { type: string; error: { type: string; message: string } };
  assert.equal(refused.type, 'error');
  assert.equal(refused.error.type, 'billing_error');
  assert.match(refused.error.message, /^insufficient_credits: /);
  assert.equal(decode(seen[0].headers.get('payment-required')).resource.url, `${gateway.config.server.publicUrl}/v1/messages`);
  assert.equal(decode(seen[1].headers.get('payment-response')).success, true);
  const balance = await gateway.ledger.balance(payer.wallet);
  assert.equal(balance.total_deposited, Number(TOP_UP));
  assert.equal(balance.credits + balance.total_spent, Number(TOP_UP));
});

test('the same payment sent again credits nothing more and is not settled again', async () => {
  const payer = await fundedPayer();
  upstream.script({ text: 'first' }, { text: 'second' });
  const header = await signedPaymentHeader(payer);
  const send = () =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(payer.key, payer.wallet, { 'payment-signature': header }),
      body: JSON.stringify(ask),
    });
  const first = await send();
  assert.equal(first.status, 200);
  const settles = facilitator.calls.filter((c) => c === 'POST /settle').length;
  const afterFirst = await gateway.ledger.balance(payer.wallet);
  assert.equal(afterFirst.total_deposited, Number(TOP_UP));
  const again = await send();
  assert.equal(again.status, 200, 'the balance still covers it: served');
  assert.equal(decode(again.headers.get('payment-response')).success, true);
  const afterAgain = await gateway.ledger.balance(payer.wallet);
  assert.equal(afterAgain.total_deposited, afterFirst.total_deposited, 'nothing more credited');
  assert.equal(afterAgain.total_spent, afterFirst.total_spent + 1);
  assert.equal(facilitator.calls.filter((c) => c === 'POST /settle').length, settles, 'not sent to the facilitator again');
});

/** Ask without paying, sign the offer's first option: the PAYMENT-SIGNATURE value a client would send. */
async function signedPaymentHeader(payer: Payer, signer = payer.account): Promise<string> {
  const http = x402HttpClient(signer);
  const offer = await fetch(`${payer.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(payer.key, payer.wallet),
    body: JSON.stringify(ask),
  });
  assert.equal(offer.status, 402);
  const payload = await http.createPaymentPayload(http.getPaymentRequiredResponse((n) => offer.headers.get(n), await offer.json()));
  return http.encodePaymentSignatureHeader(payload)['PAYMENT-SIGNATURE'];
}

/** POST the chat with a PAYMENT-SIGNATURE header: status, headers and body. */
async function sendPaid(payer: Payer, header: string): Promise<Exchange> {
  const response = await fetch(`${payer.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(payer.key, payer.wallet, { 'payment-signature': header }),
    body: JSON.stringify(ask),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

function errorOf(exchange: Exchange | undefined): { code: string; message: string; type: string } {
  return (exchange?.body as { error: { code: string; message: string; type: string } }).error;
}

/** A refused payment: 402 with the reason, a fresh offer, nothing credited, the facilitator never asked. */
async function assertRefused(payer: { wallet: string }, paid: Exchange | undefined, reason: string, callsBefore: number): Promise<void> {
  assert.equal(paid?.status, 402);
  assert.equal(errorOf(paid).code, 'payment_invalid');
  assert.match(errorOf(paid).message, new RegExp(`\\(${reason}\\)`));
  assert.equal(decode(paid!.headers.get('payment-required')).error, reason);
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0);
  assert.equal(facilitator.calls.length, callsBefore, 'refused before the facilitator');
  assert.equal(upstream.requests.length, 0, 'nothing served');
}

test('one payment sent by two requests at once is settled and credited once, and neither request fails', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  const answers = await Promise.all([sendPaid(payer, header), sendPaid(payer, header)]);
  for (const answer of answers) assert.ok([200, 503].includes(answer.status), `status ${answer.status}: ${JSON.stringify(answer.body)}`);
  assert.ok(answers.some((answer) => answer.status === 200));
  await eventually(async () => (await gateway.ledger.balance(payer.wallet)).total_deposited > 0);
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
});

test('a payment for an amount that was not offered, or whose signed value differs, is refused with the reason', async () => {
  const payer = await fundedPayer();
  const callsBefore = facilitator.calls.length;
  const small = await payingChat(payer, payer.account, {
    offer: (required: { accepts: Array<{ amount: string }> }) => {
      for (const option of required.accepts) option.amount = String(UNITS_PER_CREDIT / 2n);
    },
  });
  assert.equal(small.error?.status, 402);
  await assertRefused(payer, small.seen[1], 'amount_not_offered', callsBefore);

  const swapped = await payingChat(payer, payer.account, {
    payload: (payload: { accepted: { amount: string } }) => {
      payload.accepted.amount = String(1000n * UNITS_PER_CREDIT);
    },
  });
  await assertRefused(payer, swapped.seen[1], 'amount_mismatch', callsBefore);
});

test('a payment signed by another wallet than x-wallet-address is refused: a payment tops up only its own payer', async () => {
  const payer = await fundedPayer();
  const other = await fundedPayer();
  const callsBefore = facilitator.calls.length;
  const { seen, error } = await payingChat(payer, other.account);
  assert.equal(error?.status, 402);
  await assertRefused(payer, seen[1], 'payer_mismatch', callsBefore);
  assert.equal((await gateway.ledger.balance(other.wallet)).total_deposited, 0);
});

test('a facilitator that is down or too slow answers 503 with nothing credited or served; the same payment works once it is back', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  await facilitator.stop();
  try {
    const down = await sendPaid(payer, header);
    assert.equal(down.status, 503);
    assert.equal(errorOf(down).code, 'facilitator_unavailable');
    assert.ok(down.headers.get('retry-after'));
    assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0);
    assert.equal(upstream.requests.length, 0);
  } finally {
    await facilitator.restart();
  }
  // Up but too slow to verify: the same answer, and still nothing credited.
  facilitator.verifyDelayMs = 5_000;
  try {
    const slow = await sendPaid(payer, header);
    assert.equal(slow.status, 503);
    assert.equal(errorOf(slow).code, 'facilitator_unavailable');
    assert.match(errorOf(slow).message, /verify: timed out/);
    assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0);
  } finally {
    facilitator.verifyDelayMs = 0;
  }
  const back = await sendPaid(payer, header);
  assert.equal(back.status, 200);
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
});

test('a settlement that times out answers 503 payment_pending, is recorded, and is reconciled from authorizationState, once', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  const nonce = decode(header).payload.authorization.nonce as Hex;
  const release = facilitator.holdSettles(); // the gateway's settle times out; the facilitator settles after it gave up
  try {
    const pending = await sendPaid(payer, header);
    assert.equal(pending.status, 503);
    assert.equal(errorOf(pending).code, 'payment_pending');
    assert.equal(pending.headers.get('retry-after'), '1');
    assert.equal(upstream.requests.length, 0, 'nothing served');
    assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0);
    assert.equal(await authorizationUsed(payer.account.address, nonce), false, 'not settled yet');
    // Retried before the chain has it: still pending, and not sent to the facilitator a second time.
    const settles = facilitator.calls.filter((c) => c === 'POST /settle').length;
    const early = await sendPaid(payer, header);
    assert.equal(errorOf(early).code, 'payment_pending');
    assert.equal(facilitator.calls.filter((c) => c === 'POST /settle').length, settles);
  } finally {
    release();
  }
  await facilitator.idle();
  assert.equal(await authorizationUsed(payer.account.address, nonce), true, 'the facilitator settled it late');
  // The reconciler (every 250 ms here) reads authorizationState and credits it.
  await eventually(async () => (await gateway.ledger.balance(payer.wallet)).total_deposited > 0);
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
  assert.ok(gateway.logs.some((line) => line.msg === 'x402 pending payment settled on chain: credited' && line.wallet === payer.wallet));
  // The client's retry with the same payment is now served, and credits nothing more.
  const served = await sendPaid(payer, header);
  assert.equal(served.status, 200);
  const balance = await gateway.ledger.balance(payer.wallet);
  assert.equal(balance.total_deposited, Number(TOP_UP));
  assert.equal(balance.total_spent, 1);
});

test('a direct tool execution offers and takes payment too (its own error shape); /mcp never offers one', async () => {
  const payer = await fundedPayer();
  const execute = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/v1/tools/execute`, {
      method: 'POST',
      headers: authHeaders(payer.key, payer.wallet, headers),
      body: JSON.stringify({ tool: 'echo', args: { text: 'paid' } }),
    });
  const offer = await execute({});
  assert.equal(offer.status, 402);
  const body = (await offer.json()) as { ok: boolean; tool: string; error: { code: string } };
  assert.deepEqual([body.ok, body.tool, body.error.code], [false, 'echo', 'insufficient_credits']);
  const required = decode(offer.headers.get('payment-required'));
  assert.equal(required.resource.url, `${gateway.config.server.publicUrl}/v1/tools/execute`);
  const http = x402HttpClient(payer.account);
  const payload = await http.createPaymentPayload(http.getPaymentRequiredResponse((n) => offer.headers.get(n), body));
  const paid = await execute(http.encodePaymentSignatureHeader(payload));
  assert.equal(paid.status, 200);
  assert.deepEqual(((await paid.json()) as { result: unknown }).result, { text: 'paid' });
  assert.equal(decode(paid.headers.get('payment-response')).success, true);
  assert.deepEqual(await gateway.ledger.balance(payer.wallet), {
    address: payer.wallet,
    credits: Number(TOP_UP) - 1,
    total_deposited: Number(TOP_UP),
    total_spent: 1,
  });

  const empty = await fundedPayer();
  const mcp = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { ...authHeaders(empty.key, empty.wallet), accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }),
  });
  const answer = (await mcp.json()) as { result?: { isError?: boolean; content: Array<{ text: string }> } };
  assert.equal(answer.result?.isError, true);
  assert.match(answer.result?.content[0].text ?? '', /insufficient_credits/);
  assert.equal(mcp.headers.get('payment-required'), null, 'no payment offer on /mcp');
});

test('a payment never stands in for the API key, and a recorded nonce signed anew is refused', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  const callsBefore = facilitator.calls.length;
  const keyless = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-wallet-address': payer.wallet, 'content-type': 'application/json', 'payment-signature': header },
    body: JSON.stringify(ask),
  });
  assert.equal(keyless.status, 401);
  assert.equal(errorOf({ status: 401, headers: keyless.headers, body: await keyless.json() }).code, 'missing_api_key');
  assert.equal(facilitator.calls.length, callsBefore, 'authentication runs first');

  assert.equal((await sendPaid(payer, header)).status, 200);
  const payload = decode(header);
  payload.payload.signature = `0x${'00'.repeat(65)}`;
  const reused = await sendPaid(payer, Buffer.from(JSON.stringify(payload)).toString('base64'));
  assert.equal(reused.status, 402);
  assert.match(errorOf(reused).message, /\(nonce_already_used\)/);
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
});

test('a settlement the facilitator reports failed, which the chain confirms, is 402 with its reason; a payment signed anew settles', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  facilitator.failSettle = true;
  try {
    const failed = await sendPaid(payer, header);
    assert.equal(failed.status, 402);
    assert.match(errorOf(failed).message, /\(transaction_failed\)/);
    assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0);
    assert.equal(upstream.requests.length, 0);
  } finally {
    facilitator.failSettle = false;
  }
  // Its record stays pending until the authorization expires (it could still land): sent again, it waits.
  const again = await sendPaid(payer, header);
  assert.equal(again.status, 503);
  assert.equal(errorOf(again).code, 'payment_pending');
  assert.equal((await sendPaid(payer, await signedPaymentHeader(payer))).status, 200, 'a new authorization settles');
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
});

test('a settlement reported failed whose transaction lands after all is credited by the reconciler, once', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  facilitator.failSettleButLand = true;
  try {
    const failed = await sendPaid(payer, header);
    assert.equal(failed.status, 402);
    assert.match(errorOf(failed).message, /\(transaction_failed\)/);
    await facilitator.idle(); // the transaction lands
  } finally {
    facilitator.failSettleButLand = false;
  }
  const { authorization } = decode(header).payload as { authorization: Record<string, string> };
  assert.equal(await authorizationUsed(payer.account.address, authorization.nonce as Hex), true);
  await eventually(async () => (await gateway.ledger.balance(payer.wallet)).total_deposited === Number(TOP_UP));
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
  // Sent again now, it is a replay of a credited payment: served, nothing more credited.
  assert.equal((await sendPaid(payer, header)).status, 200);
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
});

test('a pending payment whose nonce the payer spent on another transfer is never credited', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  const { authorization } = decode(header).payload as { authorization: Record<string, string> };
  const release = facilitator.holdSettles();
  try {
    assert.equal(errorOf(await sendPaid(payer, header)).code, 'payment_pending');
    // Before the facilitator gets to it, the payer spends the same nonce on a transfer to itself.
    const signature = await payer.account.signTypedData({
      domain: { name: 'Test USD', version: '2', chainId: 31337, verifyingContract: token },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message: {
        from: payer.account.address,
        to: payer.account.address,
        value: 1n,
        validAfter: 0n,
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce as Hex,
      },
    });
    const { r, s, v } = parseSignature(signature);
    const hash = await node.wallet(0).writeContract({
      address: token,
      abi: tokenAbi,
      functionName: 'transferWithAuthorization',
      args: [payer.account.address, payer.account.address, 1n, 0n, BigInt(authorization.validBefore), authorization.nonce, Number(v), r, s],
    });
    assert.equal((await node.publicClient.waitForTransactionReceipt({ hash })).status, 'success');
  } finally {
    release();
  }
  await facilitator.idle();
  assert.equal(await authorizationUsed(payer.account.address, authorization.nonce as Hex), true);
  const forgotten = () =>
    gateway.logs.some((l) => l.msg === 'x402 pending payment: nonce spent without paying us: forgotten' && l.wallet === payer.wallet);
  await eventually(async () => forgotten());
  assert.ok(forgotten(), 'the reconciler saw the nonce spent elsewhere');
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0);
  // Sent again, it is a fresh claim the facilitator refuses: still nothing credited.
  const again = await sendPaid(payer, header);
  assert.equal(again.status, 402);
  assert.equal(errorOf(again).code, 'payment_invalid');
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0);
});

test('a key over its budget or outside its models is refused before its payment is verified or settled, with no offer', async () => {
  const payer = await fundedPayer();
  const header = await signedPaymentHeader(payer);
  const limitedKey = async (limits: Partial<KeyLimits>) =>
    (
      await gateway.apiKeys.create({
        address: payer.wallet,
        name: 'agent',
        verified: true,
        prepare: (record) =>
          gateway.ledger.setKeyLimits({ keyId: record.id, wallet: payer.wallet, limits: { ...NO_KEY_LIMITS, ...limits } }),
      })
    ).key;
  const callsBefore = facilitator.calls.length;
  const refusals: Array<[Partial<KeyLimits>, string]> = [
    [{ maxCredits: 0 }, 'key_budget_exhausted'],
    [{ models: ['svc-8b-operator'] }, 'model_not_allowed'],
  ];
  for (const [limits, code] of refusals) {
    const paid = await sendPaid({ ...payer, key: await limitedKey(limits) }, header);
    assert.equal(errorOf(paid).code, code);
    assert.equal(paid.headers.get('payment-required'), null, 'no x402 offer');
    assert.equal(paid.headers.get('payment-response'), null);
  }
  assert.equal(facilitator.calls.length, callsBefore, 'the facilitator was never asked');
  assert.equal((await gateway.ledger.balance(payer.wallet)).total_deposited, 0, 'nothing credited');
  assert.equal(upstream.requests.length, 0, 'nothing served');
  // The payment was not spent: the wallet's own unlimited key pays with it.
  const paid = await sendPaid(payer, header);
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
});

test('/metrics counts the payments above by outcome', async () => {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const count = (outcome: string) =>
    Number(new RegExp(`^switchyard_x402_payments_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  for (const outcome of ['credited', 'replayed', 'refused', 'pending', 'facilitator_unavailable', 'reconciled', 'forgotten']) {
    assert.ok(count(outcome) > 0, `${outcome}: ${count(outcome)}`);
  }
});

/** Wait until `ready` holds (the reconciler runs every 250 ms here), at most 10 s. */
async function eventually(ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await ready()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

const services = await clusterServices();

describe('cluster mode: the ledger and the payment records in PostgreSQL', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let cluster: TestGateway;
  before(async () => {
    database = await freshDatabase();
    cluster = await startChatGateway({
      upstream,
      tools: false,
      config: (json) => {
        json.freeMode = false;
        json.x402 = x402Settings();
        json.cluster = { databaseUrl: database.url };
      },
    });
  });
  after(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  test('a paid chat is credited in PostgreSQL, and a pending settlement is reconciled from its PostgreSQL record', async () => {
    const payer = await fundedPayer(cluster);
    upstream.script({ text: 'Served by the cluster.' });
    const { completion, error } = await payingChat(payer);
    assert.equal(error, undefined);
    assert.equal(completion?.choices[0].message.content, 'Served by the cluster.');
    assert.equal((await cluster.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
    assert.deepEqual(
      (await usageOf(payer)).map((r) => [r.kind, r.credits]),
      [
        ['chat', 1],
        ['x402', Number(TOP_UP)],
      ],
    );

    const late = await fundedPayer(cluster);
    const header = await signedPaymentHeader(late);
    const release = facilitator.holdSettles();
    try {
      assert.equal(errorOf(await sendPaid(late, header)).code, 'payment_pending');
    } finally {
      release();
    }
    await facilitator.idle();
    await eventually(async () => (await cluster.ledger.balance(late.wallet)).total_deposited > 0);
    assert.equal((await cluster.ledger.balance(late.wallet)).total_deposited, Number(TOP_UP));
    const served = await sendPaid(late, header);
    assert.equal(served.status, 200);
    assert.equal((await cluster.ledger.balance(late.wallet)).total_deposited, Number(TOP_UP));
  });
});

describe('an RPC provider that caps eth_getLogs', () => {
  const MAX_LOG_RANGE = 4;
  let proxy: RpcProxy;
  let capped: TestGateway;
  let refusedRanges = 0;
  /** Wider ranges are refused as providers do (-32005, EIP-1474's "limit exceeded"). */
  const refuseWideRanges = (call: JsonRpcCall) => {
    if (call.method !== 'eth_getLogs') return undefined;
    const { fromBlock, toBlock } = call.params?.[0] as { fromBlock: string; toBlock: string };
    if (Number(BigInt(toBlock) - BigInt(fromBlock)) + 1 <= MAX_LOG_RANGE) return undefined;
    refusedRanges++;
    return { jsonrpc: '2.0' as const, id: call.id, error: { code: -32005, message: `query exceeds max block range ${MAX_LOG_RANGE}` } };
  };
  /** The payment the first test settles late, for the second to search again. */
  let settled: SettlementQuery | undefined;
  before(async () => {
    proxy = await startRpcProxy(node.url, { answer: refuseWideRanges });
    const settings = x402Settings();
    (settings.assets as Array<Record<string, unknown>>)[0].rpcUrl = proxy.url;
    capped = await startChatGateway({
      upstream,
      tools: false,
      config: (json) => void Object.assign(json, { freeMode: false, x402: settings }),
    });
  });
  after(async () => {
    await capped?.stop();
    await proxy?.close();
  });

  test('a settlement that lands many blocks after the claim is found page by page and credited', async () => {
    const payer = await fundedPayer(capped);
    const header = await signedPaymentHeader(payer);
    const fromBlock = await node.publicClient.getBlockNumber();
    const release = facilitator.holdSettles(); // the gateway gives up; the blocks are mined before the settlement lands
    try {
      assert.equal(errorOf(await sendPaid(payer, header)).code, 'payment_pending');
      await node.rpc('hardhat_mine', ['0x20']); // 32 blocks between the claim and the settlement
    } finally {
      release();
    }
    await facilitator.idle();
    await eventually(async () => (await capped.ledger.balance(payer.wallet)).total_deposited > 0);
    assert.equal((await capped.ledger.balance(payer.wallet)).total_deposited, Number(TOP_UP));
    assert.ok(refusedRanges > 0, 'the search asked for more than the provider takes, and went on with less');
    const { authorization } = decode(header).payload as { authorization: Record<string, string> };
    settled = {
      rpcUrl: proxy.url,
      asset: token,
      payer: authorization.from,
      payTo: authorization.to,
      amount: BigInt(authorization.value),
      nonce: authorization.nonce,
      validBefore: Number(authorization.validBefore),
      fromBlock,
    };
  });

  test('searches that run at once against a provider not yet measured all find the settlement', async () => {
    assert.ok(settled, 'the previous test settled a payment');
    // A new URL is a provider whose range is not known yet: every search starts at the widest.
    const fresh = await startRpcProxy(node.url, { answer: refuseWideRanges });
    try {
      const states = await Promise.all(Array.from({ length: 8 }, () => settlementState({ ...settled!, rpcUrl: fresh.url })));
      assert.deepEqual(states, Array(8).fill('paid'));
    } finally {
      await fresh.close();
    }
  });

  test('a search with a time limit (a client waiting on it) answers unconfirmed once the limit passed, asking no more pages', async () => {
    assert.ok(settled, 'the first test settled a payment');
    proxy.reset();
    assert.equal(await settlementState({ ...settled, searchUntil: Date.now() - 1 }), 'unconfirmed');
    assert.equal(proxy.callCount('eth_getLogs'), 0);
    assert.equal(await settlementState({ ...settled, searchUntil: Date.now() + 30_000 }), 'paid');
  });
});

test('at start the gateway asks the facilitator what it settles (GET /supported) and finds the offered network', async () => {
  const checked = async () => gateway.logs.some((l) => l.msg === 'x402: the facilitator settles every network offered');
  await eventually(checked);
  assert.ok(await checked());
  assert.ok(facilitator.calls.includes('GET /supported'));
});

test('/openapi.json documents PAYMENT-SIGNATURE, PAYMENT-RESPONSE and the 402 offer on the routes that take payments', async () => {
  const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as any;
  for (const path of ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/tools/execute']) {
    const operation = document.paths[path].post;
    assert.ok(
      operation.parameters.some((p: { name: string; in: string }) => p.name === 'payment-signature' && p.in === 'header'),
      path,
    );
    assert.ok(operation.responses['200'].headers['payment-response'], path);
    assert.ok(operation.responses['402'].headers['payment-required'], path);
  }
  assert.equal(document.paths['/mcp'].post.responses['402']?.headers?.['payment-required'], undefined);
});
