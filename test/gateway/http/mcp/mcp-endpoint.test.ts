import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { apiKeyFor, startTestGateway, WALLET, type TestGateway } from '../../../helpers/gateway.js';
import { fixtureServer, runnableEnv, waitFor } from '../../tools/fixture-servers.js';
import { MAX_JSON_DEPTH } from '../../../../gateway/http/middleware/json-body.js';

const OTHER_WALLET = '0x000000000000000000000000000000000000dead';
/** 60 characters: with it, `echo` is exactly MCP's 64 and `echo_env` (68) is too long. */
const LONG_PREFIX = `${'p'.repeat(59)}_`;

/** The two headers an MCP client sends: the wallet, and the key when credits are on. */
function mcpHeaders(wallet = WALLET, key?: string): Record<string, string> {
  return key ? { 'x-wallet-address': wallet, authorization: `Bearer ${key}` } : { 'x-wallet-address': wallet };
}

/** The official SDK client over Streamable HTTP, connected (initialize + initialized) to /mcp. */
async function connect(gateway: TestGateway, headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A raw JSON-RPC POST to /mcp, as an MCP client sends it after initialize. */
async function postMcp(gateway: TestGateway, message: unknown, headers: Record<string, string> = mcpHeaders()) {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** A JSON-RPC tools/call request. */
function toolsCall(id: string | number, name: string, args: unknown) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/** A JSON-RPC notifications/cancelled. */
function cancelled(requestId: string | number, reason?: string) {
  return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, ...(reason ? { reason } : {}) } };
}

const errorPayload = z.object({
  error: z.object({ message: z.string(), type: z.string(), code: z.string(), param: z.string().nullable() }),
});

/** The gateway's error object inside an isError tool result. */
function toolError(result: CallToolResult): z.infer<typeof errorPayload>['error'] {
  assert.equal(result.isError, true, `expected an isError result, got ${JSON.stringify(result)}`);
  const [block] = result.content;
  assert.equal(block.type, 'text');
  return errorPayload.parse(JSON.parse((block as { text: string }).text)).error;
}

describe('/mcp: the gateway as one MCP server (free mode)', () => {
  let gateway: TestGateway;
  let client: Client;
  let scratch: string;
  let cancelLog: string;
  let startLog: string;
  /** Whether the slow fixture logged the cancellation of the call tagged `tag`. */
  const sawCancel = (tag: string) => () => existsSync(cancelLog) && readFileSync(cancelLog, 'utf8').includes(`cancelled ${tag}\n`);

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-mcp-http-'));
    cancelLog = join(scratch, 'cancelled.log');
    startLog = join(scratch, 'started.log');
    gateway = await startTestGateway({
      config: (json) => {
        json.mcpServers = {
          echo: fixtureServer('echo'),
          slow: fixtureServer('slow', { timeoutMs: 1500, env: { SLOW_CANCEL_LOG: cancelLog, SLOW_START_LOG: startLog } }),
          long: fixtureServer('echo', { prefix: LONG_PREFIX }),
          utility: {
            command: process.execPath,
            args: ['--import', 'tsx', 'tool-servers/utility/main.ts'],
            // get_time with a zone needs no network; the geocoder points nowhere all the same.
            env: { OPEN_METEO_GEOCODING_BASE_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'warn' },
          },
        };
      },
      env: runnableEnv(),
    });
    client = await connect(gateway, mcpHeaders());
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('initialize names the server; ping answers', async () => {
    assert.equal(client.getServerVersion()?.name, 'switchyard');
    assert.deepEqual(client.getServerCapabilities()?.tools, {});
    assert.match(client.getInstructions() ?? '', /list_tools/);
    assert.deepEqual(await client.ping(), {});
  });

  test('tools/list: what /v1/tools lists, with input and output schemas; names over 64 characters left out, warned at start', async () => {
    const { tools } = await client.listTools();
    const http = (await (await fetch(`${gateway.url}/v1/tools`, { headers: mcpHeaders() })).json()) as {
      tools: Array<{ name: string; description: string; input_schema: unknown }>;
    };
    const fitting = http.tools.filter((tool) => tool.name.length <= 64);
    assert.deepEqual(
      http.tools.filter((tool) => tool.name.length > 64).map((tool) => tool.name.slice(LONG_PREFIX.length)),
      ['echo_env', 'echo_argv', 'echo_pid', 'echo_fail'],
    );
    assert.deepEqual(
      tools.map((tool) => tool.name),
      fitting.map((tool) => tool.name),
    );
    assert.ok(tools.some((tool) => tool.name === `${LONG_PREFIX}echo` && tool.name.length === 64));
    for (const tool of tools) {
      const listed = fitting.find((t) => t.name === tool.name)!;
      assert.equal(tool.description, listed.description, tool.name);
      assert.deepEqual(tool.inputSchema, listed.input_schema, tool.name);
    }
    const getTime = tools.find((tool) => tool.name === 'get_time')!;
    assert.deepEqual(getTime.outputSchema?.required, ['timezone', 'iso', 'local_time', 'utc_offset', 'unix', 'day_of_week', 'is_dst']);
    assert.deepEqual(tools.find((tool) => tool.name === 'list_tools')!.outputSchema?.required, ['tools']);

    const warnings = gateway.logs.filter((line) => line.level === 40 && String(line.msg).includes("MCP's 64 characters"));
    assert.deepEqual(warnings.map((line) => String(line.tool).slice(LONG_PREFIX.length)).sort(), [
      'echo_argv',
      'echo_env',
      'echo_fail',
      'echo_pid',
    ]);
  });

  test('tools/call runs get_time: the structured result, and its JSON as text', async () => {
    const args = { timezone: 'Asia/Kolkata', at: '2026-03-08T07:00:00Z' };
    const result = (await client.callTool({ name: 'get_time', arguments: args })) as CallToolResult;
    assert.equal(result.isError, undefined);
    const structured = result.structuredContent as Record<string, unknown>;
    assert.deepEqual(
      [structured.timezone, structured.utc_offset, structured.iso, structured.day_of_week, structured.is_dst],
      ['Asia/Kolkata', '+05:30', '2026-03-08T12:30:00+05:30', 'Sunday', false],
    );
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), structured);
  });

  test('list_tools over /mcp lists only what /mcp offers: no name over 64 characters', async () => {
    const result = (await client.callTool({ name: 'list_tools', arguments: { query: 'echo' } })) as CallToolResult;
    const names = (result.structuredContent as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    assert.ok(names.includes(`${LONG_PREFIX}echo`), 'the 64-character name is offered');
    assert.deepEqual(
      names.filter((name) => name.length > 64),
      [],
    );
  });

  test('list_tools runs through tools/call like any tool', async () => {
    const result = (await client.callTool({ name: 'list_tools', arguments: { query: 'sleep' } })) as CallToolResult;
    assert.deepEqual(result.structuredContent, {
      tools: [{ name: 'sleep', description: 'Wait for ms milliseconds, then answer.', params: ['ms', 'tag'], server: 'slow' }],
    });
  });

  test('tool failures are isError results carrying the gateway error object', async () => {
    const cases: Array<[string, string, Record<string, unknown>, { code: string; type: string; param: string | null; message?: string }]> =
      [
        [
          'arguments failing the schema',
          'echo',
          {},
          { code: 'invalid_tool_arguments', type: 'invalid_request_error', param: 'text', message: 'text: is required' },
        ],
        ['unknown tool', 'nope', {}, { code: 'tool_not_found', type: 'not_found_error', param: 'tool', message: 'Unknown tool "nope".' }],
        ['a name MCP cannot carry', `${LONG_PREFIX}echo_env`, {}, { code: 'tool_not_found', type: 'not_found_error', param: 'tool' }],
        [
          "the tool's not_found",
          'echo_fail',
          { code: 'not_found', message: 'No such block.' },
          { code: 'not_found', type: 'not_found_error', param: null, message: 'No such block.' },
        ],
        [
          'upstream_unavailable',
          'echo_fail',
          { code: 'upstream_unavailable', message: 'All providers failed' },
          { code: 'upstream_unavailable', type: 'upstream_error', param: null },
        ],
        [
          'a timeout',
          'sleep',
          { ms: 20_000 },
          { code: 'tool_timeout', type: 'upstream_error', param: null, message: 'Tool "sleep" did not answer within 1500 ms.' },
        ],
        ['a crash inside the tool', 'echo_fail', { code: 'crash' }, { code: 'tool_error', type: 'server_error', param: null }],
      ];
    for (const [what, name, args, expected] of cases) {
      const error = toolError((await client.callTool({ name, arguments: args })) as CallToolResult);
      assert.equal(error.code, expected.code, what);
      assert.equal(error.type, expected.type, what);
      assert.equal(error.param, expected.param, what);
      if (expected.message) assert.equal(error.message, expected.message, what);
    }
    const logged = gateway.logs.filter((line) => line.msg === 'mcp tool call' && line.tool === 'nope');
    assert.deepEqual(
      logged.map((line) => [line.outcome, line.wallet]),
      [['tool_not_found', WALLET]],
    );
  });

  test('protocol problems are JSON-RPC errors: unknown method, arguments not an object, a message that is not JSON-RPC', async () => {
    await assert.rejects(client.request({ method: 'resources/list' }, z.object({})), (err: unknown) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, ErrorCode.MethodNotFound);
      return true;
    });
    const badArguments = await postMcp(gateway, toolsCall(1, 'echo', 'hi'));
    assert.equal(badArguments.status, 200);
    assert.equal((badArguments.body?.error as { code: number }).code, ErrorCode.InvalidParams);
    const notJsonRpc = await postMcp(gateway, { hello: 'world' });
    assert.equal(notJsonRpc.status, 400);
    const parseError = { code: ErrorCode.ParseError, message: 'Parse error: Invalid JSON-RPC message' };
    assert.deepEqual(notJsonRpc.body, { jsonrpc: '2.0', error: parseError, id: null });
  });

  test('a lone tools/call (answered without an SDK server) gets the answer the SDK path gives in a batch of one', async () => {
    const message = toolsCall('same', 'echo', { text: 'twice' });
    const lone = await postMcp(gateway, message);
    const batched = await postMcp(gateway, [message]);
    assert.deepEqual([lone.status, batched.status], [200, 200]);
    assert.match(lone.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(lone.body, batched.body);
    assert.deepEqual(lone.body, {
      result: { content: [{ type: 'text', text: '{"text":"twice"}' }], structuredContent: { text: 'twice' } },
      jsonrpc: '2.0',
      id: 'same',
    });
    const failing = { ...message, params: { name: 'echo', arguments: {} } };
    assert.deepEqual((await postMcp(gateway, failing)).body, (await postMcp(gateway, [failing])).body);
  });

  test('what the SDK transport refuses is refused the same for a tools/call: Accept, Content-Type, protocol version', async () => {
    const call = JSON.stringify(toolsCall(1, 'echo', { text: 'x' }));
    const post = (headers: Record<string, string>, body: string | null = call) =>
      fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders(), ...headers }, body });
    const jsonOnly = await post({ 'content-type': 'application/json', accept: 'application/json' });
    assert.equal(jsonOnly.status, 406);
    assert.equal(((await jsonOnly.json()) as { error: { code: number } }).error.code, -32000);
    // A body of another type is refused by the gateway's body reader (its 415 and body, as on every
    // route); a POST with no body and no type reaches the transport, which refuses the type.
    const text = await post({ 'content-type': 'text/plain', accept: 'application/json, text/event-stream' });
    assert.equal(text.status, 415);
    assert.equal(((await text.json()) as { error: { code: string } }).error.code, 'unsupported_media_type');
    const bare = await post({ accept: 'application/json, text/event-stream' }, null);
    assert.equal(bare.status, 415);
    assert.deepEqual(await bare.json(), {
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' },
      id: null,
    });
    const both = 'application/json, text/event-stream';
    const future = await post({ 'content-type': 'application/json', accept: both, 'mcp-protocol-version': '2099-01-01' });
    assert.equal(future.status, 400);
    assert.match(((await future.json()) as { error: { message: string } }).error.message, /Unsupported protocol version: 2099-01-01/);
  });

  test('any +json type is JSON on /mcp as on every other route (the SDK transport alone takes only application/json)', async () => {
    const headers = { ...mcpHeaders(), 'content-type': 'application/vnd.api+json', accept: 'application/json, text/event-stream' };
    const post = (message: unknown) => fetch(`${gateway.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(message) });
    // The lone tools/call path, and the SDK's (a batch, a ping).
    const lone = await post(toolsCall(1, 'echo', { text: 'vendor' }));
    assert.equal(lone.status, 200);
    assert.deepEqual(((await lone.json()) as { result: unknown }).result, {
      content: [{ type: 'text', text: '{"text":"vendor"}' }],
      structuredContent: { text: 'vendor' },
    });
    const batch = await post([toolsCall(2, 'echo', { text: 'b' })]);
    assert.equal(batch.status, 200);
    const ping = await post({ jsonrpc: '2.0', id: 3, method: 'ping' });
    assert.deepEqual([ping.status, await ping.json()], [200, { result: {}, jsonrpc: '2.0', id: 3 }]);
  });

  test('tools/call arguments nested past MAX_JSON_DEPTH are refused when the body is read, before the SDK or a tool sees them', async () => {
    // As text: JSON.stringify itself recurses, and 5,000 levels is where it gets close to the stack's end.
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const call = (id: number) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","deep":${deep}}}}`;
    const refusal = {
      error: {
        message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: null,
      },
    };
    // A lone call (answered without the SDK) and a batch (the SDK's path).
    for (const body of [call(1), `[${call(2)}]`]) {
      const refused = await postMcp(gateway, body);
      assert.deepEqual([refused.status, refused.body], [400, refusal]);
    }
  });

  test('HTTP-level refusals keep the OpenAI error body: invalid JSON, no wallet', async () => {
    const invalid = await postMcp(gateway, '{"jsonrpc":');
    assert.equal(invalid.status, 400);
    const invalidJson = { message: 'Request body is not valid JSON.', type: 'invalid_request_error', code: 'invalid_json', param: null };
    assert.deepEqual(invalid.body, { error: invalidJson });
    const noWallet = await postMcp(gateway, { jsonrpc: '2.0', id: 1, method: 'ping' }, {});
    assert.equal(noWallet.status, 400);
    assert.equal((noWallet.body?.error as { code: string }).code, 'invalid_wallet_address');
  });

  test('GET and DELETE /mcp: 405 with Allow: POST (no standalone stream, no sessions), not a 404', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${gateway.url}/mcp`, { method, headers: { ...mcpHeaders(), accept: 'text/event-stream' } });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get('allow'), 'POST', method);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'method_not_allowed', method);
    }
  });

  test('notifications/cancelled in a separate POST aborts the call at the tool server; its POST answers request_cancelled', async () => {
    const call = postMcp(gateway, toolsCall('call-1', 'sleep', { ms: 10_000, tag: 'by-notification' }));
    // A cancel from another wallet names nobody's call: the key is (wallet, id).
    await waitFor(
      'the call at the server',
      () => existsSync(startLog) && readFileSync(startLog, 'utf8').includes('started by-notification\n'),
    );
    const foreign = await postMcp(gateway, cancelled('call-1'), mcpHeaders(OTHER_WALLET));
    assert.equal(foreign.status, 202);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(sawCancel('by-notification')(), false);

    const cancel = await postMcp(gateway, cancelled('call-1', 'user stop'));
    assert.equal(cancel.status, 202);
    const answered = await call;
    assert.equal(answered.status, 200);
    const result = (answered.body as { result: CallToolResult }).result;
    assert.equal(toolError(result).code, 'request_cancelled');
    await waitFor('the cancellation at the server', sawCancel('by-notification'));
  });

  test('the SDK client cancelling with an AbortSignal reaches the tool server', async () => {
    const controller = new AbortController();
    const call = client.callTool({ name: 'sleep', arguments: { ms: 10_000, tag: 'by-client' } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('not needed any more'), 300);
    await assert.rejects(call);
    await waitFor('the cancellation at the server', sawCancel('by-client'), 3000);
  });

  test('a client that closes the POST connection cancels its call at the tool server', async () => {
    await new Promise<void>((resolve) => {
      const req = request(`${gateway.url}/mcp`, {
        method: 'POST',
        headers: { ...mcpHeaders(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
      req.on('error', () => resolve());
      req.end(JSON.stringify(toolsCall(9, 'sleep', { ms: 10_000, tag: 'disconnect' })));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 400);
    });
    await waitFor('the cancellation at the server', sawCancel('disconnect'), 3000);
  });

  test('tool calls through /mcp are counted per tool like /v1/tools/execute', async () => {
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    assert.match(metrics, /switchyard_tool_calls_total\{tool="get_time",outcome="ok"\} [1-9]/);
    assert.match(metrics, /switchyard_tool_calls_total\{tool="sleep",outcome="request_cancelled"\} [1-9]/);
    assert.match(metrics, /switchyard_http_requests_total\{method="POST",route="\/mcp",status="200"\} [1-9]/);
  });
});

describe('/mcp with credits on', () => {
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = false;
        json.limits = { perWallet: { points: 10_000, durationSec: 60 }, perIp: { points: 10_000, durationSec: 60 } };
        json.mcpServers = { echo: fixtureServer('echo'), slow: fixtureServer('slow') };
      },
      env: runnableEnv(),
    });
    key = await apiKeyFor(gateway);
  });

  after(async () => {
    await gateway?.stop();
  });

  test("refused before any MCP message without a key (401), with another wallet's key (403)", async () => {
    await assert.rejects(connect(gateway, mcpHeaders()), (err: unknown) => {
      assert.ok(err instanceof StreamableHTTPError);
      assert.equal(err.code, 401);
      return true;
    });
    const noKey = await postMcp(gateway, { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(noKey.status, 401);
    assert.equal((noKey.body?.error as { code: string }).code, 'missing_api_key');
    const otherKey = await apiKeyFor(gateway, OTHER_WALLET);
    const mismatch = await postMcp(gateway, { jsonrpc: '2.0', id: 1, method: 'ping' }, mcpHeaders(WALLET, otherKey));
    assert.equal(mismatch.status, 403);
    assert.equal((mismatch.body?.error as { code: string }).code, 'wallet_mismatch');
    // Not even a bad body is looked at before the key is.
    const unreadBody = await postMcp(gateway, '{"jsonrpc":', {});
    assert.equal(unreadBody.status, 400);
    assert.equal((unreadBody.body?.error as { code: string }).code, 'invalid_wallet_address');
  });

  test('a batch whose requests share an id is refused before any runs: each call was charged, only one answered (found by the fuzz test)', async () => {
    const wallet = '0x00000000000000000000000000000000000ba7c4';
    const batchKey = await apiKeyFor(gateway, wallet);
    await gateway.ledger.grant(wallet, 10, 'batch ids');
    const headers = mcpHeaders(wallet, batchKey);
    const refused = await postMcp(gateway, [toolsCall(1, 'echo', { text: 'a' }), toolsCall(1, 'echo', { text: 'b' })], headers);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, {
      jsonrpc: '2.0',
      error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request: two requests of the batch have the id 1; give each its own' },
      id: null,
    });
    const mixed = await postMcp(gateway, [toolsCall('x', 'echo', { text: 'a' }), { jsonrpc: '2.0', id: 'x', method: 'ping' }], headers);
    assert.equal(mixed.status, 400);
    assert.equal((await gateway.ledger.balance(wallet)).total_spent, 0);
    // 1 and "1" are two ids, as for the transport: both run, both answered, both paid.
    const distinct = await postMcp(gateway, [toolsCall(1, 'echo', { text: 'a' }), toolsCall('1', 'echo', { text: 'b' })], headers);
    assert.equal(distinct.status, 200);
    assert.deepEqual(
      (distinct.body as unknown as Array<{ id: unknown }>).map((answer) => answer.id),
      [1, '1'],
    );
    assert.equal((await gateway.ledger.balance(wallet)).total_spent, 2);
  });

  test('the balance falls by exactly 1 per successful call, 0 for a failed one; an empty wallet gets insufficient_credits', async () => {
    await gateway.ledger.grant(WALLET, 2);
    const client = await connect(gateway, mcpHeaders(WALLET, key));
    try {
      const balance = async () => (await gateway.ledger.balance(WALLET)).credits;
      await client.listTools();
      await client.ping();
      assert.equal(await balance(), 2, 'initialize, tools/list and ping are free');

      const ok = (await client.callTool({ name: 'echo', arguments: { text: 'paid' } })) as CallToolResult;
      assert.deepEqual(ok.structuredContent, { text: 'paid' });
      assert.equal(await balance(), 1);

      const failing = [
        ['echo', {}],
        ['nope', {}],
        ['echo_fail', { code: 'upstream_unavailable' }],
        ['echo_fail', { code: 'crash' }],
      ] as const;
      for (const [name, args] of failing) {
        const failed = (await client.callTool({ name, arguments: args })) as CallToolResult;
        assert.equal(failed.isError, true, name);
      }
      assert.equal(await balance(), 1, 'failed calls cost nothing');

      assert.equal(((await client.callTool({ name: 'echo', arguments: { text: 'last' } })) as CallToolResult).isError, undefined);
      const broke = (await client.callTool({ name: 'echo', arguments: { text: 'more' } })) as CallToolResult;
      const error = toolError(broke);
      assert.deepEqual([error.code, error.type], ['insufficient_credits', 'insufficient_credits_error']);
      assert.equal(error.message, 'Insufficient credits: balance is 0, this request needs at least 1.');
      const after = await gateway.ledger.balance(WALLET);
      assert.deepEqual([after.credits, after.total_spent], [0, 2]);
    } finally {
      await client.close();
    }
  });

  test("an empty wallet's tools/call is still HTTP 200 with an isError result", async () => {
    const answered = await postMcp(gateway, toolsCall(3, 'echo', { text: 'x' }), mcpHeaders(WALLET, key));
    assert.equal(answered.status, 200);
    assert.equal(toolError((answered.body as { result: CallToolResult }).result).code, 'insufficient_credits');
  });

  test('a cancelled call costs nothing: its hold goes back to the wallet', async () => {
    const wallet = '0x2222222222222222222222222222222222222222';
    const headers = mcpHeaders(wallet, await apiKeyFor(gateway, wallet));
    await gateway.ledger.grant(wallet, 1);
    const call = postMcp(gateway, toolsCall('slow-1', 'sleep', { ms: 10_000 }), headers);
    await waitFor('the credit held', async () => (await gateway.ledger.balance(wallet)).credits === 0, 5000);
    assert.equal((await postMcp(gateway, cancelled('slow-1'), headers)).status, 202);
    assert.equal(toolError(((await call).body as { result: CallToolResult }).result).code, 'request_cancelled');
    const balance = await gateway.ledger.balance(wallet);
    assert.deepEqual([balance.credits, balance.total_spent], [1, 0]);
  });

  test('200 concurrent tools/call on 50 credits: exactly 50 succeed', async () => {
    const wallet = '0x1111111111111111111111111111111111111111';
    const walletKey = await apiKeyFor(gateway, wallet);
    await gateway.ledger.grant(wallet, 50);
    const client = await connect(gateway, mcpHeaders(wallet, walletKey));
    try {
      const results = (await Promise.all(
        Array.from({ length: 200 }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `call ${i}` } })),
      )) as CallToolResult[];
      const succeeded = results.filter((result) => !result.isError);
      assert.equal(succeeded.length, 50);
      assert.deepEqual(
        [...new Set(results.filter((result) => result.isError).map((result) => toolError(result).code))],
        ['insufficient_credits'],
      );
      const balance = await gateway.ledger.balance(wallet);
      assert.deepEqual([balance.credits, balance.total_spent], [0, 50]);
    } finally {
      await client.close();
    }
  });
});

describe('/mcp under the per-wallet budget', () => {
  let gateway: TestGateway;

  before(async () => {
    gateway = await startTestGateway({
      config: (json) => {
        json.limits = { perWallet: { points: 3, durationSec: 60 } };
        json.mcpServers = { echo: fixtureServer('echo') };
      },
      env: runnableEnv(),
    });
  });

  after(async () => {
    await gateway?.stop();
  });

  test('every POST counts, whatever it carries; over the budget a 429 with Retry-After and the OpenAI body', async () => {
    assert.equal((await postMcp(gateway, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 200);
    assert.equal((await postMcp(gateway, toolsCall(2, 'echo', { text: 'x' }))).status, 200);
    assert.equal((await postMcp(gateway, cancelled(2))).status, 202);
    const refused = await postMcp(gateway, toolsCall(3, 'echo', { text: 'x' }));
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal((refused.body?.error as { code: string }).code, 'rate_limited');
    // Another wallet has its own budget.
    assert.equal((await postMcp(gateway, { jsonrpc: '2.0', id: 1, method: 'ping' }, mcpHeaders(OTHER_WALLET))).status, 200);
  });
});
