import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import type Router from '@koa/router';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../../fixtures/upstream/scripted-upstream.js';
import { startChatGateway } from '../../chat/chat-harness.js';
import { startTestGateway, walletHeaders, type TestGateway } from '../../../helpers/gateway.js';
import { openApiPath } from '../../../../gateway/http/openapi/openapi-document.js';

type Json = Record<string, any>;

let upstream: ScriptedUpstream;
let gateway: TestGateway;
let document: Json;
/** The document with every $ref resolved, for checking answers against its schemas. */
let resolved: Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });

before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({ upstream, config: (json) => void (json.adminToken = 'admin-secret-token-1234') });
  const res = await fetch(`${gateway.url}/openapi.json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  document = (await res.json()) as Json;
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  assert.deepEqual(result.errors, undefined);
  resolved = validator.resolveRefs() as Json;
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** The methods and paths the app's router really serves, in OpenAPI form (HEAD comes with GET). */
function servedRoutes(app: TestGateway['app']): string[] {
  const dispatch = app.middleware.find((mw) => (mw as { router?: Router }).router !== undefined) as { router: Router } | undefined;
  assert.ok(dispatch, 'the app mounts a router');
  return dispatch.router.stack.flatMap((layer) =>
    layer.methods.filter((m) => m !== 'HEAD').map((method) => `${method} ${openApiPath(String(layer.path))}`),
  );
}

function documentedRoutes(doc: Json): string[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.keys(item as Json).map((m) => `${m.toUpperCase()} ${path}`));
}

/** Assert `body` matches the document's schema for this operation's answer. */
function assertConforms(method: string, path: string, status: number, body: unknown, mediaType = 'application/json'): void {
  const schema = resolved.paths[path]?.[method]?.responses?.[status]?.content?.[mediaType]?.schema;
  assert.ok(schema, `the document has a ${mediaType} schema for ${method.toUpperCase()} ${path} → ${status}`);
  const validate = ajv.compile(schema);
  assert.ok(validate(body), `${method.toUpperCase()} ${path} → ${status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
}

describe('GET /openapi.json', () => {
  test('is a valid OpenAPI 3.1 document that needs no wallet header', () => {
    assert.equal(document.openapi, '3.1.0');
    assert.equal(document.info.version, '1.0.0');
    assert.deepEqual(document.servers, [{ url: '/' }], 'PUBLIC_URL unset and port 0: relative to the document');
    assert.equal(document.paths['/openapi.json'].get.security.length, 0);
  });

  test('documents every route the router serves, and nothing else', () => {
    const served = servedRoutes(gateway.app);
    assert.ok(served.length >= 14, `only ${served.length} routes found: ${served.join(', ')}`);
    const documented = documentedRoutes(document);
    const missing = served.filter((route) => !documented.includes(route));
    const extra = documented.filter((route) => !served.includes(route));
    const why = 'served but not in /openapi.json (missing), or documented but not served (extra)';
    assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, why);
    const operationIds = Object.values(document.paths as Json).flatMap((item) => Object.values(item as Json).map((op) => op.operationId));
    assert.equal(new Set(operationIds).size, served.length, `operationIds are unique: ${operationIds.join(', ')}`);
  });

  test('the security schemes are the wallet header and the bearer key together; free mode also allows the header alone', async () => {
    assert.deepEqual(document.components.securitySchemes.walletAddress, {
      type: 'apiKey',
      in: 'header',
      name: 'x-wallet-address',
      description: '0x + 40 hex; mixed case must be EIP-55',
    });
    assert.equal(document.components.securitySchemes.bearerKey.scheme, 'bearer');
    // The test gateway runs in free mode.
    assert.deepEqual(document.paths['/v1/models'].get.security, [{ walletAddress: [] }, { walletAddress: [], bearerKey: [] }]);
    assert.deepEqual(document.paths['/auth/api-keys'].get.security, [{ walletAddress: [], bearerKey: [] }]);
    assert.deepEqual(document.paths['/auth/nonce'].get.security, [{ walletAddress: [] }]);
    assert.deepEqual(document.paths['/metrics'].get.security, [{ adminToken: [] }]);
    assert.deepEqual(document.paths['/health'].get.security, []);

    const paid = await startTestGateway({ config: (json) => void (json.freeMode = false), env: { PUBLIC_URL: 'https://gw.example/sy' } });
    try {
      const doc = (await (await fetch(`${paid.url}/openapi.json`)).json()) as Json;
      assert.deepEqual(doc.servers, [{ url: 'https://gw.example/sy' }]);
      assert.deepEqual(doc.paths['/v1/chat/completions'].post.security, [{ walletAddress: [], bearerKey: [] }]);
      assert.deepEqual(doc.paths['/metrics'].get.security, [], 'no ADMIN_TOKEN: /metrics is open');
    } finally {
      await paid.stop();
    }
  });

  test('request schemas are the ones the routes validate with', () => {
    const chat = document.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(chat.required, ['messages']);
    assert.equal(chat.properties.messages.minItems, 1);
    assert.deepEqual(chat.properties.temperature.anyOf[0], { type: 'number', minimum: 0, maximum: 2 });
    const key = document.paths['/auth/api-keys'].post.requestBody.content['application/json'].schema;
    assert.equal(key.additionalProperties, false);
    assert.equal(key.properties.name.maxLength, 64);
    const grant = document.paths['/admin/credits/grant'].post;
    assert.deepEqual(grant.parameters.find((p: Json) => p.in === 'header' && p.name === 'Idempotency-Key')?.required, true);
    assert.deepEqual(
      document.paths['/auth/api-keys/{id}'].delete.parameters.find((p: Json) => p.in === 'path'),
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    );
  });

  test('the documented request bodies accept and refuse what the routes accept and refuse', async () => {
    const cases: Array<[path: string, body: unknown]> = [
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], temperature: 1 }],
      ['/v1/chat/completions', { messages: [] }],
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], temperature: 3 }],
      ['/v1/chat/completions', { messages: [{ role: 'robot', content: 'hi' }] }],
      ['/v1/tools/execute', { tool: 'echo', args: { text: 'a' } }],
      ['/v1/tools/execute', { tool: '' }],
      ['/auth/api-keys', { name: 'laptop' }],
      ['/auth/api-keys', { name: 'laptop', extra: 1 }],
    ];
    for (const [path, body] of cases) {
      const schema = resolved.paths[path].post.requestBody.content['application/json'].schema;
      const documentSays = ajv.validate(schema, body);
      const res = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: walletHeaders(), body: JSON.stringify(body) });
      await res.arrayBuffer();
      // A valid chat body reaches the (unscripted) upstream, so anything but a 400 counts as accepted.
      assert.equal(res.status !== 400, documentSays, `${path} ${JSON.stringify(body)}: document ${documentSays}, route ${res.status}`);
    }
  });

  test('error responses: the OpenAI shape, Retry-After on 429, ok/tool on /v1/tools/execute', () => {
    const chat = document.paths['/v1/chat/completions'].post.responses;
    for (const status of ['400', '401', '402', '403', '413', '415', '429', '500', '502', '503', '504']) {
      assert.deepEqual(chat[status].content['application/json'].schema, { $ref: '#/components/schemas/ErrorBody' }, status);
    }
    assert.ok(chat['429'].headers['Retry-After']);
    assert.deepEqual(document.components.schemas.ErrorBody.properties.error.required, ['message', 'type', 'code', 'param']);
    const executeResponses = document.paths['/v1/tools/execute'].post.responses;
    const execute = executeResponses['404'].content['application/json'].schema;
    assert.deepEqual(execute.required, ['ok', 'tool', 'error']);
    // What comes before the route (the HTTP server's refusals, the per-IP budget) has the plain body.
    const plain = { $ref: '#/components/schemas/ErrorBody' };
    for (const status of ['417', '431']) assert.deepEqual(executeResponses[status].content['application/json'].schema, plain, status);
    for (const status of ['400', '429']) {
      assert.deepEqual(executeResponses[status].content['application/json'].schema.anyOf, [execute, plain], status);
    }
    assert.ok(chat['200'].content['text/event-stream'].schema, 'the stream chunk is described');
  });

  test("every operation documents the HTTP server's own refusals (400, 417, 431) and, but /health, the per-IP 429", () => {
    for (const [path, item] of Object.entries(document.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        const statuses = Object.keys((op as Json).responses);
        for (const status of ['400', '417', '431']) assert.ok(statuses.includes(status), `${method} ${path} documents ${status}`);
        assert.equal(statuses.includes('429'), path !== '/health', `${method} ${path} and 429`);
      }
    }
  });

  test("/mcp: the transport's refusals are JSON-RPC errors (406), beside the gateway's OpenAI body where both answer (400, 415)", () => {
    const mcp = document.paths['/mcp'].post.responses;
    const transport = mcp['406'].content['application/json'].schema;
    assert.deepEqual(transport.required, ['jsonrpc', 'error', 'id']);
    assert.deepEqual(transport.properties.id, { type: 'null' });
    for (const status of ['400', '415']) {
      assert.deepEqual(mcp[status].content['application/json'].schema.anyOf, [document.components.schemas.ErrorBody, transport], status);
    }
    for (const status of ['401', '403', '413', '429']) {
      assert.deepEqual(mcp[status].content['application/json'].schema, { $ref: '#/components/schemas/ErrorBody' }, status);
    }
  });
});

describe('answers match the document', () => {
  const wallet = walletHeaders();

  test('health, models, tools, credits and the nonce', async () => {
    for (const path of ['/v1/models', '/v1/tools', '/credits/balance', '/auth/nonce']) {
      const res = await fetch(`${gateway.url}${path}`, { headers: wallet });
      assert.equal(res.status, 200, path);
      assertConforms('get', path, 200, await res.json());
    }
    const health = await fetch(`${gateway.url}/health`);
    assertConforms('get', '/health', health.status, await health.json());
  });

  test('a tool run, and its failure with ok: false', async () => {
    const execute = (body: unknown) =>
      fetch(`${gateway.url}/v1/tools/execute`, { method: 'POST', headers: wallet, body: JSON.stringify(body) });
    const ok = await execute({ tool: 'echo', args: { text: 'hi' } });
    assert.equal(ok.status, 200);
    assertConforms('post', '/v1/tools/execute', 200, await ok.json());
    const missing = await execute({ tool: 'nope' });
    assert.equal(missing.status, 404);
    assertConforms('post', '/v1/tools/execute', 404, await missing.json());
    const badArgs = await execute({ tool: 'echo', args: [1] });
    assert.equal(badArgs.status, 400);
    const body = (await badArgs.json()) as Json;
    assert.equal(body.error.code, 'invalid_tool_arguments');
    assertConforms('post', '/v1/tools/execute', 400, body);
  });

  test('keys: create, list, revoke', async () => {
    const created = await fetch(`${gateway.url}/auth/api-keys`, { method: 'POST', headers: wallet, body: JSON.stringify({ name: 'doc' }) });
    assert.equal(created.status, 200);
    const key = (await created.json()) as Json;
    assertConforms('post', '/auth/api-keys', 200, key);
    const withKey = { ...wallet, authorization: `Bearer ${key.key}` };
    const list = await fetch(`${gateway.url}/auth/api-keys`, { headers: withKey });
    assertConforms('get', '/auth/api-keys', 200, await list.json());
    const revoked = await fetch(`${gateway.url}/auth/api-keys/${key.id}`, { method: 'DELETE', headers: withKey });
    assertConforms('delete', '/auth/api-keys/{id}', 200, await revoked.json());
  });

  test('a chat with a tool round, as JSON and as a stream', async () => {
    upstream.script({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] }, { text: 'Done.' });
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: wallet,
      body: JSON.stringify({ messages: [{ role: 'user', content: 'go' }] }),
    });
    assert.equal(res.status, 200);
    const completion = (await res.json()) as Json;
    assert.equal(completion.tool_trace.length, 1);
    assertConforms('post', '/v1/chat/completions', 200, completion);

    upstream.script({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] }, { text: 'Done.' });
    const stream = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: wallet,
      body: JSON.stringify({ stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'go' }] }),
    });
    const blocks = (await stream.text()).split('\n\n');
    const chunks = blocks.filter((block) => block.startsWith('data: {')).map((block) => JSON.parse(block.slice('data: '.length)) as Json);
    assert.ok(chunks.some((c) => c.tool_trace?.length === 1) && chunks.some((c) => c.usage));
    // The round's `: tool_result` comment carries the trace entry the final chunk lists.
    const results = blocks.filter((block) => block.startsWith(': tool_result ')).map((block) => JSON.parse(block.slice(14)) as Json);
    assert.deepEqual(results, chunks.find((c) => c.tool_trace)?.tool_trace);
    const completionSchema = resolved.paths['/v1/chat/completions'].post.responses[200].content['application/json'].schema;
    const entrySchema = completionSchema.properties.tool_trace.items;
    assert.ok(ajv.validate(entrySchema, results[0]), ajv.errorsText());
    for (const chunk of chunks) assertConforms('post', '/v1/chat/completions', 200, chunk, 'text/event-stream');
  });

  test('structured outputs, a stored response with its input items, and item_not_found conform', async () => {
    const format = {
      type: 'json_schema',
      name: 'city',
      schema: { type: 'object', properties: { city: { type: 'string' } } },
      strict: true,
    };
    upstream.script({ text: '{"city":"Oslo"}' });
    const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: wallet,
      body: JSON.stringify({ messages: [{ role: 'user', content: 'go' }], response_format: { type: 'json_schema', json_schema: format } }),
    });
    assert.equal(chat.status, 200);
    assertConforms('post', '/v1/chat/completions', 200, await chat.json());

    upstream.script({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] }, { text: '{"city":"Oslo"}' });
    const created = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: wallet,
      body: JSON.stringify({ input: 'go', text: { format }, include: ['message.output_text.logprobs'] }),
    });
    assert.equal(created.status, 200);
    const response = (await created.json()) as Json;
    assert.deepEqual(response.text.format, format);
    assertConforms('post', '/v1/responses', 200, response);

    upstream.script({ text: 'Again.' });
    const next = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: wallet,
      body: JSON.stringify({
        input: [
          { type: 'item_reference', id: response.output[0].id },
          { role: 'user', content: 'again' },
        ],
      }),
    });
    const nextId = ((await next.json()) as Json).id;
    const items = await fetch(`${gateway.url}/v1/responses/${nextId}/input_items?order=asc`, { headers: wallet });
    assert.equal(items.status, 200);
    const list = (await items.json()) as Json;
    assert.deepEqual(
      list.data.map((item: Json) => item.type),
      ['mcp_call', 'message'],
    );
    assertConforms('get', '/v1/responses/{id}/input_items', 200, list);

    const missing = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: wallet,
      body: JSON.stringify({ input: [{ type: 'item_reference', id: 'msg_unknown' }] }),
    });
    assert.equal(missing.status, 404);
    assertConforms('post', '/v1/responses', 404, await missing.json());
  });

  test("/mcp's refusals: the gateway's and the transport's", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}/mcp`, {
        method: 'POST',
        headers: { ...wallet, accept: 'application/json, text/event-stream', ...headers },
        body,
      });
    const answers: Array<[Response, number]> = [
      [await post('{"jsonrpc":'), 400], // the gateway's invalid_json
      [await post('{"hello":"world"}'), 400], // the transport's -32700
      [await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { accept: 'application/json' }), 406],
      [await post('{}', { 'content-type': 'text/plain' }), 415],
      [await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { 'mcp-protocol-version': '1999-01-01' }), 400],
    ];
    for (const [res, status] of answers) {
      assert.equal(res.status, status);
      assertConforms('post', '/mcp', status, await res.json());
    }
    const bare = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { ...walletHeaders(), 'content-type': '', accept: 'application/json, text/event-stream' },
    });
    assert.equal(bare.status, 415);
    assertConforms('post', '/mcp', 415, await bare.json());
  });

  test('errors: a missing wallet header, a refused admin token', async () => {
    const res = await fetch(`${gateway.url}/v1/models`);
    assert.equal(res.status, 400);
    assertConforms('get', '/v1/models', 400, await res.json());
    const adminPath = `/admin/credits/${walletHeaders()['x-wallet-address']}`;
    const admin = await fetch(`${gateway.url}${adminPath}`, { headers: { authorization: 'Bearer wrong' } });
    assert.equal(admin.status, 401);
    assertConforms('get', '/admin/credits/{address}', 401, await admin.json());
  });
});
