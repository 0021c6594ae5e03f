/**
 * The Responses event stream on the wire (raw fetch, free mode): `event:` lines that match each
 * payload's `type`, keep-alive comments while a gateway tool runs, and the same cancellation as
 * chat — a client that leaves stops the tool calls at the MCP server and the upstream call, and
 * its concurrency slot is free again. Stored responses here live 400 ms (`responses.ttlMs`).
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { startChatGateway } from '../chat/chat-harness.js';
import { fixtureServer, waitFor } from '../tools/fixture-servers.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-responses-stream-'));
const cancelLog = join(scratch, 'cancelled.log');
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    tools: false,
    config: (json) => {
      json.chat = { keepAliveMs: 50 };
      json.limits = { chatConcurrencyPerWallet: 1 };
      json.responses = { ttlMs: 400 };
      json.mcpServers = { slow: fixtureServer('slow', { env: { SLOW_CANCEL_LOG: cancelLog } }) };
    },
  });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => upstream.reset());

function post(body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: walletHeaders(),
    body: JSON.stringify({ model: 'conductor', ...body }),
    signal,
  });
}

/** SSE blocks: `{event, data}` for events, `{comment}` for comment lines. */
function blocks(text: string): Array<{ event?: string; data?: Record<string, unknown>; comment?: string }> {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      if (block.startsWith(': ')) return { comment: block.slice(2) };
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine.replace(/^event: /, ''), data: JSON.parse(dataLine.replace(/^data: /, '')) as Record<string, unknown> };
    });
}

test('every event names its type twice; keep-alive comments while a gateway tool runs; no [DONE]', async () => {
  upstream.script({ toolCalls: [{ id: 'call_sleep0001', name: 'sleep', arguments: '{"ms":300}' }] }, { text: 'Rested.' });
  const res = await post({ input: 'Sleep a bit.', stream: true });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const text = await res.text();
  assert.doesNotMatch(text, /\[DONE\]/);
  const list = blocks(text);
  for (const block of list.filter((b) => b.event)) assert.equal(block.event, block.data?.type);
  const inProgress = list.findIndex((b) => b.event === 'response.mcp_call.in_progress');
  const completed = list.findIndex((b) => b.event === 'response.mcp_call.completed');
  assert.ok(inProgress > 0 && completed > inProgress);
  const during = list.slice(inProgress + 1, completed).map((b) => b.comment);
  assert.ok(during.length >= 3 && during.every((c) => c === 'keepalive'), JSON.stringify(during));
  assert.equal(list.at(-1)?.event, 'response.completed');
  const sequence = list.filter((b) => b.data).map((b) => b.data?.sequence_number);
  assert.deepEqual(
    sequence,
    sequence.map((_, i) => i),
  );
});

test('a client that leaves while a gateway tool runs cancels it at the MCP server; the slot is free again', async () => {
  upstream.script({ toolCalls: [{ id: 'call_sleep0002', name: 'sleep', arguments: '{"ms":20000,"tag":"r1"}' }] });
  const controller = new AbortController();
  const res = await post({ input: 'Sleep long.', stream: true }, controller.signal);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('response.mcp_call.in_progress')) text += new TextDecoder().decode((await reader.read()).value);
  await new Promise((resolve) => setTimeout(resolve, 100)); // the call reaches the server
  controller.abort();
  await waitFor('the tool call cancelled', () => existsSync(cancelLog) && readFileSync(cancelLog, 'utf8').includes('cancelled r1'), 5000);
  assert.equal(upstream.requests.length, 1, 'no further round');

  upstream.script({ text: 'Still here.' });
  const next = await post({ input: 'Hello?' });
  assert.equal(next.status, 200, 'the wallet’s one slot was released');
  assert.equal(((await next.json()) as { output: Array<{ content: Array<{ text: string }> }> }).output[0].content[0].text, 'Still here.');
});

test('a client that leaves while the model writes aborts the upstream call', async () => {
  upstream.script({ text: ['first', ' never'], holdLast: true });
  const controller = new AbortController();
  const res = await post({ input: 'Write.', stream: true }, controller.signal);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('"delta":"first"')) text += new TextDecoder().decode((await reader.read()).value);
  await upstream.held();
  controller.abort();
  const aborted = await upstream.abortedRequest();
  assert.equal(aborted, upstream.requests[0]);
  upstream.release();
});

test('a stored response is readable until responses.ttlMs has passed, then 404', async () => {
  upstream.script({ text: 'Brief.' });
  const created = (await (await post({ input: 'Hi' })).json()) as { id: string };
  const read = () => fetch(`${gateway.url}/v1/responses/${created.id}`, { headers: walletHeaders() });
  assert.equal((await read()).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 450));
  const expired = await read();
  assert.equal(expired.status, 404);
  assert.equal(((await expired.json()) as { error: { code: string } }).error.code, 'response_not_found');
});
