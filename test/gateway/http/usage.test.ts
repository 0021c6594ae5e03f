/**
 * GET /credits/usage and GET /admin/credits/:address/usage on the real gateway (credits on,
 * embedded ledger): what chats, tool runs, MCP calls, responses, messages and grants write, paging
 * and filters over HTTP, one wallet never seeing another's, the retention sweep, and free mode
 * writing nothing.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fundedWallet, authHeaders, startTestGateway, walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openSqlite } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { openEmbeddedLedger } from '../../../gateway/ledger/embedded-ledger.js';
import { STORE_FILE } from '../../../gateway/storage/sqlite/keyv-store.js';
import { postChat, startChatGateway } from '../chat/chat-harness.js';

const ADMIN_TOKEN = 'usage-admin-token-0123456789';
let upstream: ScriptedUpstream;
let gateway: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.limits = { chatConcurrencyPerWallet: 64 };
    },
    env: { ADMIN_TOKEN },
  });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

async function usage(key: string, wallet: string, query = ''): Promise<{ status: number; body: any }> {
  const res = await fetch(`${gateway.url}/credits/usage${query}`, { headers: authHeaders(key, wallet) });
  return { status: res.status, body: await res.json() };
}

const ask = { model: 'conductor', messages: [{ role: 'user' as const, content: 'Plan something.' }] };

test('a chat with two tool rounds writes one record: both tools, the exact tokens, what it was charged, its request and key', async () => {
  const { wallet, key, keyId } = await fundedWallet(gateway, 100);
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"a"}' }], usage: { prompt_tokens: 1200, completion_tokens: 100 } },
    {
      toolCalls: [
        { name: 'echo', arguments: '{"text":"b"}' },
        { name: 'list_tools', arguments: '{}' },
      ],
      usage: { prompt_tokens: 1500, completion_tokens: 300 },
    },
    { text: 'Done.', usage: { prompt_tokens: 2000, completion_tokens: 400 } },
  );
  const chat = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(chat.status, 200);
  const { status, body } = await usage(key, wallet);
  assert.equal(status, 200);
  assert.equal(body.object, 'list');
  assert.equal(body.has_more, false);
  assert.equal(body.next_cursor, null);
  const [record, grant] = body.data;
  assert.equal(body.data.length, 2);
  assert.deepEqual(
    { ...record, id: undefined, at: undefined },
    {
      id: undefined,
      at: undefined,
      kind: 'chat',
      request_id: chat.headers.get('x-request-id'),
      key_id: keyId,
      model: 'svc-32b-conductor',
      tools: { echo: 2, list_tools: 1 },
      prompt_tokens: 4700,
      completion_tokens: 800,
      credits: 7,
      source_id: null,
    },
  );
  assert.equal(Number(chat.headers.get('x-credits-charged')), record.credits);
  assert.ok(Date.parse(record.at) >= Date.parse(grant.at));
  assert.deepEqual([grant.kind, grant.credits, grant.key_id], ['grant', 100, null]);
});

test('a failed chat writes what it paid; one that did nothing writes nothing', async () => {
  const { wallet, key } = await fundedWallet(gateway, 20);
  upstream.script({ streamError: { message: 'CUDA out of memory' } });
  assert.equal((await postChat(gateway, ask, authHeaders(key, wallet))).status, 502);
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"e"}' }], usage: { prompt_tokens: 2500, completion_tokens: 500 } },
    { streamError: { message: 'CUDA out of memory' } },
  );
  const failed = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(failed.status, 502);
  const { body } = await usage(key, wallet, '?kind=chat');
  assert.deepEqual(
    body.data.map((r: any) => [r.request_id, r.credits, r.tools, r.prompt_tokens, r.completion_tokens]),
    [[failed.headers.get('x-request-id'), 4, { echo: 1 }, 2500, 500]],
  );
  const balance = await gateway.ledger.balance(wallet);
  assert.equal(balance.total_spent, 4);
});

test('tool runs (/v1/tools/execute and /mcp) and responses write their kinds; the totals add up to total_spent', async () => {
  const { wallet, key, keyId } = await fundedWallet(gateway, 50);
  const executed = await fetch(`${gateway.url}/v1/tools/execute`, {
    method: 'POST',
    headers: authHeaders(key, wallet),
    body: JSON.stringify({ tool: 'echo', args: { text: 'hi' } }),
  });
  assert.equal(executed.status, 200);
  const client = new Client({ name: 'usage-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: authHeaders(key, wallet) } }),
  );
  try {
    const result = await client.callTool({ name: 'echo', arguments: { text: 'over mcp' } });
    assert.notEqual(result.isError, true);
  } finally {
    await client.close();
  }
  upstream.script({ text: 'A response.', usage: { prompt_tokens: 10, completion_tokens: 5 } });
  const response = await fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: authHeaders(key, wallet),
    body: JSON.stringify({ model: 'operator', input: 'Hello', store: false }),
  });
  assert.equal(response.status, 200);

  const { body } = await usage(key, wallet);
  assert.deepEqual(
    body.data.map((r: any) => [r.kind, r.model, r.tools, r.credits, r.key_id]),
    [
      ['response', 'svc-8b-operator', {}, 1, keyId],
      ['mcp', null, { echo: 1 }, 1, keyId],
      ['tool', null, { echo: 1 }, 1, keyId],
      ['grant', null, {}, 50, null],
    ],
  );
  assert.equal(body.data[2].request_id, executed.headers.get('x-request-id'));
  const byModel = (await usage(key, wallet, '?group_by=model')).body;
  assert.equal(byModel.object, 'usage_totals');
  const spent = byModel.data.reduce((sum: number, t: any) => sum + t.spent, 0);
  assert.equal(spent, (await gateway.ledger.balance(wallet)).total_spent);
  assert.deepEqual(
    byModel.data.map((t: any) => [t.group, t.records, t.spent, t.added]),
    [
      [null, 3, 2, 50],
      ['svc-8b-operator', 1, 1, 0],
    ],
  );
});

test('a /v1/messages request writes a message record with its tokens and model', async () => {
  const { wallet, key, keyId } = await fundedWallet(gateway, 20);
  upstream.script({ text: 'Hello from messages.', usage: { prompt_tokens: 1200, completion_tokens: 300 } });
  const res = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: authHeaders(key, wallet),
    body: JSON.stringify({ model: 'conductor', max_tokens: 200, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const { body } = await usage(key, wallet, '?kind=message');
  assert.deepEqual(
    body.data.map((r: any) => [r.kind, r.model, r.prompt_tokens, r.completion_tokens, r.credits, r.key_id, r.request_id]),
    [['message', 'svc-32b-conductor', 1200, 300, 2, keyId, res.headers.get('x-request-id')]],
  );
});

test('paging newest first with next_cursor, filters by kind, key and time; bad queries are 400 in the error shape', async () => {
  const { wallet, key, keyId } = await fundedWallet(gateway, 30);
  const other = await gateway.apiKeys.create({ address: wallet, name: 'second', verified: true });
  const run = (withKey: string) =>
    fetch(`${gateway.url}/v1/tools/execute`, {
      method: 'POST',
      headers: authHeaders(withKey, wallet),
      body: JSON.stringify({ tool: 'echo', args: { text: 'x' } }),
    }).then((res) => res.headers.get('x-request-id'));
  const ids: Array<string | null> = [];
  for (let i = 0; i < 5; i++) ids.push(await run(i % 2 === 0 ? key : other.key));

  const seen: string[] = [];
  let query = '?limit=2&kind=tool';
  for (;;) {
    const { status, body } = await usage(key, wallet, query);
    assert.equal(status, 200);
    assert.ok(body.data.length <= 2);
    seen.push(...body.data.map((r: any) => r.request_id));
    if (!body.has_more) break;
    query = `?limit=2&kind=tool&cursor=${body.next_cursor}`;
  }
  assert.deepEqual(seen, [...ids].reverse());
  const mine = (await usage(key, wallet, `?key_id=${keyId}`)).body.data.map((r: any) => r.request_id);
  assert.deepEqual(mine, [ids[4], ids[2], ids[0]]);
  const byKey = (await usage(key, wallet, '?group_by=key&kind=tool')).body.data;
  assert.deepEqual(
    byKey.map((t: any) => [t.group, t.records, t.spent]),
    [
      [keyId, 3, 3],
      [other.record.id, 2, 2],
    ],
  );
  const future = (await usage(key, wallet, '?from=2999-01-01')).body;
  assert.deepEqual(future.data, []);
  const past = (await usage(key, wallet, '?to=2000-01-01T00:00:00Z')).body;
  assert.deepEqual(past.data, []);
  const today = new Date().toISOString().slice(0, 10);
  const byDay = (await usage(key, wallet, `?group_by=day&from=${today}`)).body.data;
  assert.equal(byDay[0].group, today);

  for (const bad of [
    '?limit=201',
    '?limit=0',
    '?kind=lunch',
    '?from=yesterday',
    '?cursor=abc',
    '?group_by=day&cursor=1.2',
    '?group_by=week',
    '?colour=red',
  ]) {
    const { status, body } = await usage(key, wallet, bad);
    assert.equal(status, 400, bad);
    assert.equal(body.error.type, 'invalid_request_error', bad);
  }
});

test("another wallet's records are never visible: its own list, its own key, and no key of the first", async () => {
  const first = await fundedWallet(gateway, 10);
  const second = await fundedWallet(gateway, 10);
  await fetch(`${gateway.url}/v1/tools/execute`, {
    method: 'POST',
    headers: authHeaders(first.key, first.wallet),
    body: JSON.stringify({ tool: 'echo', args: { text: 'x' } }),
  });
  const seen = (await usage(second.key, second.wallet)).body.data;
  assert.deepEqual(
    seen.map((r: any) => r.kind),
    ['grant'],
  );
  // Naming the first wallet's key filters the second's records: none.
  assert.deepEqual((await usage(second.key, second.wallet, `?key_id=${first.keyId}`)).body.data, []);
  // The first wallet's key with the second wallet's header is refused.
  const crossed = await usage(first.key, second.wallet);
  assert.equal(crossed.status, 403);
});

test('the operator reads any wallet at GET /admin/credits/:address/usage; an admin grant appears with its idempotency key', async () => {
  const { wallet } = await fundedWallet(gateway, 0);
  const granted = await fetch(`${gateway.url}/admin/credits/grant`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'usage-grant-1' },
    body: JSON.stringify({ address: wallet, amount: 12 }),
  });
  assert.equal(granted.status, 200);
  const res = await fetch(`${gateway.url}/admin/credits/${wallet}/usage?group_by=day`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(res.status, 200);
  const totals = (await res.json()) as any;
  assert.deepEqual(
    totals.data.map((t: any) => [t.records, t.added]),
    [[1, 12]],
  );
  const list = (await (
    await fetch(`${gateway.url}/admin/credits/${wallet}/usage`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  ).json()) as any;
  assert.deepEqual(
    list.data.map((r: any) => [r.kind, r.credits, r.source_id]),
    [['grant', 12, 'usage-grant-1']],
  );
  const refused = await fetch(`${gateway.url}/admin/credits/${wallet}/usage`, { headers: { authorization: 'Bearer wrong' } });
  assert.equal(refused.status, 401);
});

test('records older than usage.retentionDays are swept at start (and hourly); balances stay as they were', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-usage-retention-'));
  const wallet = '0x' + '5e'.repeat(20);
  const day = 86_400_000;
  try {
    // Records written 40 and 10 days ago, by a ledger on that clock.
    let clock = Date.now() - 40 * day;
    const db = await openSqlite(join(dataDir, STORE_FILE));
    const ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000, now: () => clock });
    await ledger.grant(wallet, 50);
    await ledger.charge(wallet, 5, {
      usage: { kind: 'tool', requestId: 'old', model: null, tools: { echo: 1 }, promptTokens: 0, completionTokens: 0 },
    });
    clock += 30 * day;
    await ledger.charge(wallet, 3, {
      usage: { kind: 'tool', requestId: 'recent', model: null, tools: { echo: 1 }, promptTokens: 0, completionTokens: 0 },
    });
    await ledger.stop();
    await db.close();

    const kept = await startTestGateway({
      dataDir,
      config: (json) => void (json.freeMode = false),
      env: { ADMIN_TOKEN, USAGE_RETENTION_DAYS: '30' },
    });
    try {
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const requestIds = async () =>
        ((await (await fetch(`${kept.url}/admin/credits/${wallet}/usage`, { headers: admin })).json()) as any).data.map(
          (r: any) => r.request_id,
        );
      // The start's sweep runs beside the first requests: wait for it to have deleted the old two.
      for (let ids = await requestIds(); ids.length !== 1; ids = await requestIds()) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.deepEqual(await requestIds(), ['recent']);
      assert.deepEqual(await kept.ledger.balance(wallet), { address: wallet, credits: 42, total_deposited: 50, total_spent: 8 });
    } finally {
      await kept.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('free mode writes no usage records', async () => {
  const free = await startChatGateway({ upstream, config: (json) => (json.freeMode = true) });
  try {
    const wallet = '0x' + 'ef'.repeat(20);
    const res = await fetch(`${free.url}/v1/tools/execute`, {
      method: 'POST',
      headers: walletHeaders(wallet),
      body: JSON.stringify({ tool: 'echo', args: { text: 'free' } }),
    });
    assert.equal(res.status, 200);
    const listed = await fetch(`${free.url}/credits/usage`, { headers: walletHeaders(wallet) });
    assert.equal(listed.status, 200);
    assert.deepEqual(((await listed.json()) as any).data, []);
  } finally {
    await free.stop();
  }
});
