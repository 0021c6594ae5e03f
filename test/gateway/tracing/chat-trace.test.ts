/**
 * One paid chat with two tool rounds, traced end to end: the client's `traceparent` is continued
 * through the gateway (protobuf to the receiver), into the scripted upstream (its `traceparent`
 * header), into two kit tool servers (one exporting JSON, one protobuf) whose `tools/call` spans
 * sit under the gateway's `execute_tool` spans, and a tool's provider call under its server span.
 * No prompt, argument, result, wallet, key or response id reaches any span.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { readFileSync } from 'node:fs';
import { startOtlpReceiver, traceTree, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';
import { apiKeyFor, authHeaders, startTestGateway, WALLET, WALLET_CHECKSUMMED, type TestGateway } from '../../helpers/gateway.js';
import { fixtureServer, runnableEnv } from '../tools/fixture-servers.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const PROMPT = 'Which sea holds the island of Atlantis-7781?';
const ECHOED = 'echo-argument-5523';
const ANSWER = 'Final answer text 9917.';

/** The trace's shape: docs/tracing.md shows this very drawing. */
const TREE = `POST /v1/chat/completions  [server, switchyard]
└─ invoke_agent switchyard  [internal]
   ├─ chat qwen3:32b  [client]
   ├─ execute_tool echo  [client]
   │  └─ tools/call echo  [server, switchyard-echo]
   ├─ chat qwen3:32b  [client]
   ├─ execute_tool fetch_status  [client]
   │  └─ tools/call fetch_status  [server, switchyard-fetch]
   │     └─ GET  [client]
   └─ chat qwen3:32b  [client]`;

let receiver: OtlpReceiver;
let upstream: ScriptedUpstream;
let provider: { url: string; headers: IncomingHttpHeaders[]; close(): Promise<void> };
let gateway: TestGateway;

before(async () => {
  receiver = await startOtlpReceiver();
  upstream = await startScriptedUpstream();
  provider = await startProvider();
  gateway = await startTestGateway({
    env: runnableEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '10' }),
    config: (json) => {
      json.freeMode = false;
      for (const model of json.models as Array<{ upstream: Record<string, unknown> }>) model.upstream.baseUrl = upstream.baseUrl;
      json.mcpServers = {
        // The shipped config's way: OTEL_* by prefix. One server told to send JSON, the other protobuf (the default).
        echo: { ...fixtureServer('echo', { env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } }), envPassthrough: ['OTEL_'] },
        fetch: { ...fixtureServer('fetch'), envPassthrough: ['OTEL_'] },
      };
    },
  });
});

after(async () => {
  await gateway?.stop();
  await upstream?.close();
  await provider?.close();
  await receiver?.close();
});

test('a paid chat with two tool rounds is one trace: HTTP → invoke_agent → chat and execute_tool → the servers’ tools/call → the provider call', async () => {
  await gateway.ledger.grant(WALLET, 100);
  const key = await apiKeyFor(gateway);
  upstream.script(
    { toolCalls: [{ id: 'call_echo', name: 'echo', arguments: JSON.stringify({ text: ECHOED }) }] },
    { toolCalls: [{ id: 'call_fetch', name: 'fetch_status', arguments: JSON.stringify({ url: `${provider.url}/status` }) }] },
    { text: ANSWER },
  );
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(key, WALLET, { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01`, tracestate: 'client=1' }),
    body: JSON.stringify({ model: 'conductor', messages: [{ role: 'user', content: PROMPT }] }),
  });
  assert.equal(response.status, 200);
  const completion = (await response.json()) as { id: string; choices: Array<{ message: { content: string } }> };
  assert.equal(completion.choices[0].message.content, ANSWER);

  // Everything of the trace has arrived once the HTTP span (ended last in the gateway), both
  // servers' tools/call spans and the provider call's span are in.
  const trace = await receiver.waitFor((spans) => {
    const mine = spans.filter((s) => s.traceId === TRACE_ID);
    const done =
      mine.some((s) => s.kind === 'server' && s.name === 'POST /v1/chat/completions') &&
      mine.filter((s) => s.name.startsWith('tools/call ')).length === 2 &&
      mine.some((s) => s.name === 'GET');
    return done ? mine : undefined;
  });
  assert.equal(traceTree(trace), TREE);
  assert.ok(readFileSync('docs/tracing.md', 'utf8').includes(TREE), 'docs/tracing.md draws this trace');
  const byName = (name: string) => trace.filter((s) => s.name === name);
  const only = (name: string) => {
    const found = byName(name);
    assert.equal(found.length, 1, `one "${name}" span (got ${trace.map((s) => s.name).join(', ')})`);
    return found[0];
  };

  // The HTTP server span continues the client's span; a route template, the status, no client address.
  const http = only('POST /v1/chat/completions');
  assert.equal(http.parentSpanId, CLIENT_SPAN);
  assert.equal(http.kind, 'server');
  assert.equal(http.service, 'switchyard');
  assert.equal(http.format, 'protobuf');
  assert.equal(http.attributes['http.route'], '/v1/chat/completions');
  assert.equal(http.attributes['http.request.method'], 'POST');
  assert.equal(http.attributes['http.response.status_code'], 200);
  assert.equal(http.attributes['client.address'], undefined);
  assert.equal(http.attributes['switchyard.wallet.hmac'], undefined, 'no wallet tag without TRACE_WALLET_HMAC_SECRET');

  // invoke_agent: the canonical model, rounds, finish reason, usage, credits, the ledger's steps.
  const agent = only('invoke_agent switchyard');
  assert.equal(agent.kind, 'internal');
  assert.equal(agent.parentSpanId, http.spanId);
  assert.equal(agent.attributes['gen_ai.operation.name'], 'invoke_agent');
  assert.equal(agent.attributes['gen_ai.request.model'], 'svc-32b-conductor');
  assert.equal(agent.attributes['switchyard.chat.tool_rounds'], 2);
  assert.deepEqual(agent.attributes['gen_ai.response.finish_reasons'], ['stop']);
  assert.equal(agent.attributes['gen_ai.usage.input_tokens'], 150);
  assert.equal(agent.attributes['gen_ai.usage.output_tokens'], 30);
  assert.equal(agent.attributes['switchyard.credits.charged'], 1);
  const ledgerSteps = agent.events.map((e) => e.name);
  assert.ok(ledgerSteps.includes('switchyard.ledger.reserve'), ledgerSteps.join());
  assert.equal(ledgerSteps.at(-1), 'switchyard.ledger.settle');

  // Three upstream calls, each its own chat span under the agent, on the deployment that served it.
  const calls = byName('chat qwen3:32b');
  assert.equal(calls.length, 3);
  for (const call of calls) {
    assert.equal(call.kind, 'client');
    assert.equal(call.parentSpanId, agent.spanId);
    assert.equal(call.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(call.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(call.attributes['gen_ai.system'], undefined, 'the pre-1.37 name is not emitted');
    assert.equal(call.attributes['gen_ai.request.model'], 'qwen3:32b');
    assert.equal(call.attributes['server.address'], '127.0.0.1');
    assert.equal(call.attributes['server.port'], Number(new URL(upstream.baseUrl).port));
    assert.equal(call.attributes['switchyard.deployment'], 'default');
    assert.equal(call.attributes['gen_ai.usage.input_tokens'], 50);
  }
  // The upstream saw each call's own span as its parent, in the client's trace.
  assert.deepEqual(upstream.requests.map((r) => r.traceparent).sort(), calls.map((c) => `00-${TRACE_ID}-${c.spanId}-01`).sort());

  // One execute_tool span per tool call (no second MCP client span), the MCP attributes on it.
  const executions = trace.filter((s) => s.name.startsWith('execute_tool '));
  assert.deepEqual(executions.map((s) => s.name).sort(), ['execute_tool echo', 'execute_tool fetch_status']);
  for (const execution of executions) {
    assert.equal(execution.kind, 'client');
    assert.equal(execution.parentSpanId, agent.spanId);
    assert.equal(execution.attributes['mcp.method.name'], 'tools/call');
    assert.equal(execution.attributes['network.transport'], 'pipe');
    assert.match(String(execution.attributes['jsonrpc.request.id']), /^\d+$/);
    assert.equal(execution.attributes['error.type'], undefined);
  }
  assert.equal(only('execute_tool echo').attributes['gen_ai.tool.call.id'], 'call_echo');

  // Each server's tools/call span is a direct child of the execute_tool span that called it.
  for (const [tool, service, format] of [
    ['echo', 'switchyard-echo', 'json'],
    ['fetch_status', 'switchyard-fetch', 'protobuf'],
  ] as const) {
    const served = only(`tools/call ${tool}`);
    const execution = only(`execute_tool ${tool}`);
    assert.equal(served.kind, 'server');
    assert.equal(served.service, service);
    assert.equal(served.format, format);
    assert.equal(served.parentSpanId, execution.spanId);
    assert.equal(served.attributes['jsonrpc.request.id'], execution.attributes['jsonrpc.request.id']);
    assert.equal(served.attributes['gen_ai.tool.name'], tool);
  }

  // The fetch tool's provider call: a CLIENT span under its tools/call span; the provider got no trace context.
  const providerCall = only('GET');
  assert.equal(providerCall.kind, 'client');
  assert.equal(providerCall.parentSpanId, only('tools/call fetch_status').spanId);
  assert.equal(providerCall.attributes['server.address'], '127.0.0.1');
  assert.equal(providerCall.attributes['http.response.status_code'], 204);
  assert.equal(provider.headers.length, 1);
  assert.equal(provider.headers[0].traceparent, undefined);
  assert.equal(provider.headers[0].tracestate, undefined);

  // Nothing personal on any span: no prompt, argument, answer, wallet, key or response id.
  const everything = JSON.stringify(trace.map((s: ReceivedSpan) => [s.name, s.attributes, s.events, s.status]));
  for (const secret of [PROMPT, ECHOED, ANSWER, WALLET, WALLET_CHECKSUMMED, key, completion.id, provider.url]) {
    assert.ok(!everything.includes(secret), `"${secret}" must not be on a span`);
  }
  assert.equal(receiver.requests.refused, 0);
});

test('/health says tracing is on, where it exports, and that nothing was dropped', async () => {
  const health = (await (await fetch(`${gateway.url}/health`)).json()) as { status: string; tracing: Record<string, unknown> };
  assert.equal(health.status, 'ok');
  assert.equal(health.tracing.enabled, true);
  assert.equal(health.tracing.exporter, receiver.url);
  assert.equal(health.tracing.protocol, 'http/protobuf');
  assert.equal(health.tracing.dropped_spans, 0);
  assert.equal(health.tracing.last_failure, undefined);
});

/** A provider a tool calls: answers 204 and keeps each request's headers. */
async function startProvider() {
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    headers.push(req.headers);
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, headers, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
