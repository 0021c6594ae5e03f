/**
 * Key limits end to end on the embedded gateway (credits on): a key capped at 50 credits under 200
 * concurrent tool executions, refusals (budget, expiry, tools, models) and where they apply (GET
 * /v1/tools, execute, list_tools, a chat's tool offer and its runs, /mcp), managing keys with a
 * limited key, PATCH with a SIWE proof and the operator's PATCH, and free mode enforcing nothing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { startChatGateway } from '../chat/chat-harness.js';
import { authHeaders, walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { ADMIN_TOKEN, ALICE, BOB, call, errorOf, mintVerifiedKey, signedProof } from '../../helpers/accounts.js';
import { burstOfExecutes, mintKeyWith } from '../../helpers/key-limits.js';
import { NO_KEY_LIMITS } from '../../../gateway/ledger/key-budgets.js';

const wallet = ALICE.address.toLowerCase();

describe('key limits (embedded, credits on)', () => {
  let upstream: ScriptedUpstream;
  let gateway: TestGateway;
  /** A key of ALICE with no limits: manages the others. */
  let ownerKey: string;

  before(async () => {
    upstream = await startScriptedUpstream();
    gateway = await startChatGateway({
      upstream,
      config: (json) => {
        json.freeMode = false;
        json.adminToken = ADMIN_TOKEN;
        (json.server as Record<string, unknown>).publicUrl = 'https://switchyard.test';
      },
    });
    ownerKey = await mintVerifiedKey(gateway, ALICE, 'owner');
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  async function execute(key: string, tool: string, args: Record<string, unknown> = {}) {
    return call(`${gateway.url}/v1/tools/execute`, { method: 'POST', headers: authHeaders(key, wallet), body: { tool, args } });
  }

  async function listKeys(key: string) {
    return call(`${gateway.url}/auth/api-keys`, { headers: authHeaders(key, wallet) });
  }

  test('200 concurrent executes (1 credit each) on a key capped at 50, wallet 1,000: exactly 50 of 200 and 150 of 402 key_budget_exhausted', async () => {
    const before = await gateway.ledger.balance(wallet);
    await gateway.ledger.grant(wallet, 1_000);
    const minted = await mintKeyWith(gateway, ALICE, { max_credits: 50 });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    assert.equal(minted.body.limits.max_credits, 50);
    const counts = await burstOfExecutes([gateway.url], minted.body.key, wallet, 200);
    assert.deepEqual(Object.fromEntries(counts), { '200': 50, '402 key_budget_exhausted': 150 });
    const balance = await gateway.ledger.balance(wallet);
    assert.equal(balance.credits - before.credits, 950);
    const listing = (await listKeys(ownerKey)).body.data.find((k: { id: string }) => k.id === minted.body.id);
    assert.deepEqual(listing.spend, { lifetime: 50, today: 50 });
    const refused = await execute(minted.body.key, 'list_tools');
    assert.deepEqual(errorOf(refused), { status: 402, code: 'key_budget_exhausted', type: refused.body.error.type });
    assert.match(refused.body.error.message, /wallet may still hold credits/);
    assert.equal(refused.headers.get('payment-required'), null, 'no x402 offer');
  });

  test('a capped key lists only itself and may not change or revoke keys (403 key_not_allowed)', async () => {
    const capped = (await mintKeyWith(gateway, ALICE, { max_credits: 5 })).body;
    const listed = await listKeys(capped.key);
    assert.deepEqual(
      listed.body.data.map((k: { id: string }) => k.id),
      [capped.id],
    );
    assert.equal(listed.body.data[0].limits.max_credits, 5);
    const proof = await signedProof(gateway, ALICE);
    const raise = await call(`${gateway.url}/auth/api-keys/${capped.id}`, {
      method: 'PATCH',
      headers: authHeaders(capped.key, wallet),
      body: { max_credits: 1_000_000, message: proof.message, signature: proof.signature },
    });
    assert.deepEqual(errorOf(raise), { status: 403, code: 'key_not_allowed', type: raise.body.error.type });
    const ownerId = (await listKeys(ownerKey)).body.data.find((k: { name: string }) => k.name === 'owner').id;
    const revoke = await call(`${gateway.url}/auth/api-keys/${ownerId}`, { method: 'DELETE', headers: authHeaders(capped.key, wallet) });
    assert.equal(errorOf(revoke).code, 'key_not_allowed');
    assert.equal((await execute(ownerKey, 'list_tools')).status, 200, 'the owner key still works');
    assert.equal((await gateway.ledger.keyUsage([capped.id])).get(capped.id)?.limits.maxCredits, 5, 'the cap is unchanged');
  });

  test("PATCH with a fresh SIWE proof raises a spent key's cap at once; without a proof it is refused; the operator may too", async () => {
    await gateway.ledger.grant(wallet, 100);
    const capped = (await mintKeyWith(gateway, ALICE, { max_credits: 1 })).body;
    assert.equal((await execute(capped.key, 'list_tools')).status, 200);
    assert.equal((await execute(capped.key, 'list_tools')).status, 402);
    const noProof = await call(`${gateway.url}/auth/api-keys/${capped.id}`, {
      method: 'PATCH',
      headers: authHeaders(ownerKey, wallet),
      body: { max_credits: 3 },
    });
    assert.equal(errorOf(noProof).code, 'siwe_proof_required');
    const proof = await signedProof(gateway, ALICE);
    const patched = await call(`${gateway.url}/auth/api-keys/${capped.id}`, {
      method: 'PATCH',
      headers: authHeaders(ownerKey, wallet),
      body: { max_credits: 3, message: proof.message, signature: proof.signature },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual([patched.body.limits.max_credits, patched.body.spend.lifetime], [3, 1]);
    assert.equal((await execute(capped.key, 'list_tools')).status, 200);
    const admin = await call(`${gateway.url}/admin/api-keys/${capped.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: { wallet, max_credits: null, tools: ['echo'] },
    });
    assert.equal(admin.status, 200, JSON.stringify(admin.body));
    assert.deepEqual([admin.body.limits.max_credits, admin.body.limits.tools], [null, ['echo']]);
    assert.equal(errorOf(await execute(capped.key, 'list_tools')).code, 'tool_not_allowed');
    const other = await call(`${gateway.url}/admin/api-keys/${capped.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: { wallet: BOB.address, max_credits: 1 },
    });
    assert.equal(errorOf(other).code, 'api_key_not_found', "another wallet's key id is not found");
  });

  test('an expired key is 401 api_key_expired; expires_at in the past or unknown tools and models are refused at creation', async () => {
    const minted = (await mintKeyWith(gateway, ALICE, { expires_at: new Date(Date.now() + 3_600_000).toISOString() })).body;
    assert.equal((await execute(minted.key, 'list_tools')).status, 200);
    // Its time passes: the operator's store moved it into the past (no sleeping in tests).
    await gateway.ledger.setKeyLimits({ keyId: minted.id, wallet, limits: { ...NO_KEY_LIMITS, expiresAt: Date.now() - 1 } });
    await gateway.apiKeys.limitsChanged(wallet, minted.id);
    const expired = await execute(minted.key, 'list_tools');
    assert.deepEqual(errorOf(expired), { status: 401, code: 'api_key_expired', type: expired.body.error.type });
    for (const [limits, param] of [
      [{ expires_at: new Date(Date.now() - 1_000).toISOString() }, 'expires_at'],
      [{ tools: ['no_such_tool'] }, 'tools'],
      [{ tools: ['nowhere:*'] }, 'tools'],
      [{ models: ['gpt-5'] }, 'models'],
      [{ max_credits: -1 }, 'max_credits'],
    ] as const) {
      const refused = await mintKeyWith(gateway, ALICE, limits);
      assert.equal(refused.status, 400, JSON.stringify(limits));
      assert.equal(refused.body.error.param, param);
    }
  });

  test('tool scope: GET /v1/tools, execute, list_tools and /mcp show and run only the allowed tools', async () => {
    await gateway.ledger.grant(wallet, 100);
    const scoped = (await mintKeyWith(gateway, ALICE, { tools: ['echo:*', 'list_tools'] })).body;
    const tools = await call(`${gateway.url}/v1/tools`, { headers: authHeaders(scoped.key, wallet) });
    const names: string[] = tools.body.tools.map((t: { name: string }) => t.name);
    assert.ok(names.includes('echo') && names.includes('list_tools'), names.join());
    assert.ok(!names.some((name) => name === 'sleep' || name === 'quick_sleep'), names.join());
    const refused = await execute(scoped.key, 'sleep', {});
    assert.deepEqual(errorOf(refused), { status: 403, code: 'tool_not_allowed', type: refused.body.error.type });
    assert.equal(refused.body.ok, false);
    assert.equal((await execute(scoped.key, 'echo', { text: 'hi' })).status, 200);
    const listed = await execute(scoped.key, 'list_tools');
    const listedNames: string[] = listed.body.result.tools.map((t: { name: string }) => t.name);
    assert.deepEqual(listedNames.sort(), [...names].sort(), 'list_tools tells of the allowed tools only');

    const mcp = async (message: unknown) => {
      const res = await fetch(`${gateway.url}/mcp`, {
        method: 'POST',
        headers: {
          ...authHeaders(scoped.key, wallet),
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
        },
        body: JSON.stringify(message),
      });
      return (await res.json()) as { result: Record<string, any> };
    };
    const mcpList = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.deepEqual(mcpList.result.tools.map((t: { name: string }) => t.name).sort(), [...names].sort());
    const mcpRefused = await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleep', arguments: {} } });
    assert.equal(mcpRefused.result.isError, true);
    assert.equal(JSON.parse(mcpRefused.result.content[0].text).error.code, 'tool_not_allowed');
    const mcpOk = await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
    assert.notEqual(mcpOk.result.isError, true);
  });

  test('a chat offers the model only the allowed tools, and refuses a tool it calls outside them', async () => {
    await gateway.ledger.grant(wallet, 10_000);
    const scoped = (await mintKeyWith(gateway, ALICE, { tools: ['echo'] })).body;
    upstream.reset();
    upstream.script(
      {
        toolCalls: [
          { name: 'sleep', arguments: '{}' },
          { name: 'echo', arguments: '{"text":"a"}' },
        ],
      },
      { text: 'done' },
    );
    const chat = await call(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(scoped.key, wallet),
      body: { messages: [{ role: 'user', content: 'go' }] },
    });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    const offered = upstream.requests[0].body.tools?.map((t) => t.function.name);
    assert.deepEqual(offered, ['echo']);
    const trace = chat.body.tool_trace as Array<{ tool: string; ok: boolean; error?: { code: string } }>;
    assert.deepEqual(
      trace.map((t) => [t.tool, t.ok, t.error?.code]),
      [
        ['sleep', false, 'tool_not_allowed'],
        ['echo', true, undefined],
      ],
    );
    // A client function is never scoped: it is offered beside the allowed tools.
    upstream.script({ text: 'ok' });
    const withClientFn = await call(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(scoped.key, wallet),
      body: {
        messages: [{ role: 'user', content: 'go' }],
        tools: [{ type: 'function', function: { name: 'my_fn', parameters: { type: 'object' } } }],
      },
    });
    assert.equal(withClientFn.status, 200);
    assert.deepEqual(
      upstream.requests.at(-1)?.body.tools?.map((t) => t.function.name),
      ['echo', 'my_fn'],
    );
  });

  test('model scope: aliases resolve to canonical ids; another model (the default one included) is 403 model_not_allowed', async () => {
    await gateway.ledger.grant(wallet, 10_000);
    const minted = await mintKeyWith(gateway, ALICE, { models: ['operator'] });
    assert.deepEqual(minted.body.limits.models, ['svc-8b-operator']);
    const key = minted.body.key;
    const requests = upstream.requests.length;
    for (const body of [
      { messages: [{ role: 'user', content: 'x' }] },
      { model: 'conductor', messages: [{ role: 'user', content: 'x' }] },
    ]) {
      const refused = await call(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: authHeaders(key, wallet), body });
      assert.deepEqual(errorOf(refused), { status: 403, code: 'model_not_allowed', type: refused.body.error.type });
    }
    const responses = await call(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: authHeaders(key, wallet),
      body: { model: 'conductor', input: 'x' },
    });
    assert.equal(errorOf(responses).code, 'model_not_allowed');
    const messages = await call(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: authHeaders(key, wallet),
      body: { model: 'conductor', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(messages.status, 403, JSON.stringify(messages.body));
    assert.equal(messages.body.type, 'error', "in the Messages API's own shape");
    assert.match(messages.body.error.message, /may not use the model/);
    assert.equal(upstream.requests.length, requests, 'nothing went upstream');
    upstream.script({ text: 'fine' });
    const allowed = await call(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(key, wallet),
      body: { model: 'operator', messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  });

  test("GET /credits/usage: a key with limits sees only its own records, whatever key_id it names; a key without sees the wallet's", async () => {
    await gateway.ledger.grant(wallet, 100);
    const limited = (await mintKeyWith(gateway, ALICE, { max_credits: 10 })).body;
    const ownerId = (await listKeys(ownerKey)).body.data.find((k: { name: string }) => k.name === 'owner').id;
    assert.equal((await execute(limited.key, 'echo', { text: 'mine' })).status, 200);
    assert.equal((await execute(limited.key, 'echo', { text: 'mine too' })).status, 200);
    assert.equal((await execute(ownerKey, 'echo', { text: 'the owner' })).status, 200);
    const usage = (key: string, query = '') => call(`${gateway.url}/credits/usage${query}`, { headers: authHeaders(key, wallet) });

    const own = await usage(limited.key);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.deepEqual(
      own.body.data.map((r: { kind: string; key_id: string; credits: number }) => [r.kind, r.key_id, r.credits]),
      [
        ['tool', limited.id, 1],
        ['tool', limited.id, 1],
      ],
    );
    assert.deepEqual((await usage(limited.key, `?key_id=${ownerId}`)).body.data, [], 'naming another key shows none of its records');
    assert.deepEqual((await usage(limited.key, '?group_by=key')).body.data, [
      { group: limited.id, records: 2, spent: 2, added: 0, prompt_tokens: 0, completion_tokens: 0 },
    ]);

    // A key without limits sees the wallet's every record: the limited key's, its own, and the grants.
    const all = (await usage(ownerKey, '?limit=200')).body.data as Array<{ kind: string; key_id: string | null }>;
    assert.deepEqual(
      all.slice(0, 3).map((r) => r.key_id),
      [ownerId, limited.id, limited.id],
    );
    assert.ok(all.some((r) => r.kind === 'grant' && r.key_id === null));
  });

  test('a key without limits is listed with limits and spend null', async () => {
    const listing = (await listKeys(ownerKey)).body.data.find((k: { name: string }) => k.name === 'owner');
    assert.deepEqual([listing.limits, listing.spend], [null, null]);
    assert.equal(typeof listing.last_used_at, 'number');
  });
});

describe('key limits in free mode', () => {
  test('limits are stored and listed but not enforced', async () => {
    const upstream = await startScriptedUpstream();
    const gateway = await startChatGateway({ upstream, tools: false });
    try {
      const minted = await call(`${gateway.url}/auth/api-keys`, {
        method: 'POST',
        headers: walletHeaders(),
        body: { max_credits: 0, tools: ['echo:*'] },
      });
      assert.equal(minted.status, 400, 'a server that does not exist is still refused');
      const capped = await call(`${gateway.url}/auth/api-keys`, {
        method: 'POST',
        headers: walletHeaders(),
        body: { max_credits: 0, models: ['operator'] },
      });
      assert.equal(capped.status, 200, JSON.stringify(capped.body));
      const res = await call(`${gateway.url}/v1/tools/execute`, {
        method: 'POST',
        headers: authHeaders(capped.body.key),
        body: { tool: 'list_tools', args: {} },
      });
      assert.equal(res.status, 200);
    } finally {
      await gateway.stop();
      await upstream.close();
    }
  });
});
