/** Every status and error code of the gateway core, through the real app on an ephemeral port. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { startTestGateway, walletHeaders, WALLET, type TestGateway } from '../../helpers/gateway.js';
import { API_KEY } from '../secrets.js';
import { rawExchange } from '../../helpers/raw-http.js';
import { MAX_JSON_DEPTH } from '../../../gateway/http/middleware/json-body.js';

const BODY_LIMIT = 2048;
let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway({ env: { BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
});
after(() => gateway.stop());

async function expectError(res: Response, status: number, error: { message: string; type: string; code: string; param: string | null }) {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(await res.json(), { error });
}

const CHAT = '/v1/chat/completions';

test('malformed JSON → 400 invalid_json (bodies are read only after the wallet check)', async () => {
  const error = { message: 'Request body is not valid JSON.', type: 'invalid_request_error', code: 'invalid_json', param: null };
  await expectError(await fetch(`${gateway.url}${CHAT}`, { method: 'POST', headers: walletHeaders(), body: '{"a":' }), 400, error);
  await expectError(await fetch(`${gateway.url}${CHAT}`, { method: 'POST', headers: walletHeaders(), body: "{'single': 1}" }), 400, error);
  // Strict JSON: a bare string is not an acceptable body either.
  await expectError(await fetch(`${gateway.url}${CHAT}`, { method: 'POST', headers: walletHeaders(), body: '"text"' }), 400, error);
  // Without a wallet the body is never read: the caller is refused first.
  const anonymous = await fetch(`${gateway.url}${CHAT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":',
  });
  assert.equal(anonymous.status, 400);
  assert.equal((await anonymous.json()).error.code, 'invalid_wallet_address');
});

test('a body that is not JSON → 415 unsupported_media_type, on every route that reads JSON', async () => {
  const error = {
    message: 'Send the body as application/json.',
    type: 'invalid_request_error',
    code: 'unsupported_media_type',
    param: null,
  };
  const asText = walletHeaders(WALLET, { 'content-type': 'text/plain' });
  await expectError(await fetch(`${gateway.url}${CHAT}`, { method: 'POST', headers: asText, body: '{"messages":[]}' }), 415, error);
  await expectError(await fetch(`${gateway.url}/auth/api-keys`, { method: 'POST', headers: asText, body: '{}' }), 415, error);
  const form = walletHeaders(WALLET, { 'content-type': 'application/x-www-form-urlencoded' });
  await expectError(await fetch(`${gateway.url}/auth/api-keys`, { method: 'POST', headers: form, body: 'name=x' }), 415, error);
  // JSON with a suffix type is JSON; no body at all needs no type.
  const vendor = walletHeaders(WALLET, { 'content-type': 'application/vnd.api+json' });
  assert.equal((await fetch(`${gateway.url}/auth/api-keys`, { method: 'POST', headers: vendor, body: '{}' })).status, 200);
  const bare = await fetch(`${gateway.url}/auth/api-keys`, { method: 'POST', headers: { 'x-wallet-address': WALLET } });
  assert.equal(bare.status, 200);
});

/** Send raw bytes; the answer's status line, headers and JSON body. */
async function exchange(bytes: string): Promise<{ statusLine: string; headers: Record<string, string>; body: unknown; interim: string[] }> {
  const answer = await rawExchange(gateway.url, bytes);
  assert.ok(answer, `an answer to ${bytes.slice(0, 40)}`);
  return {
    statusLine: answer.statusLine,
    headers: answer.headers,
    body: JSON.parse(answer.body.toString('utf8')),
    interim: answer.interim,
  };
}

test("an Expect other than 100-continue → 417 expectation_failed in the usual shape, not Node's bare 417", async () => {
  for (const expect of ['foo', '200-ok', 'continue']) {
    const answer = await exchange(`GET /health HTTP/1.1\r\nHost: x\r\nExpect: ${expect}\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.statusLine, 'HTTP/1.1 417 Expectation Failed', expect);
    assert.match(answer.headers['content-type'], /^application\/json/);
    assert.ok(answer.headers['x-request-id'], 'it went through the app (request id, log line)');
    assert.deepEqual(answer.body, {
      error: {
        message: 'The gateway meets no Expect but 100-continue; send the request without it.',
        type: 'invalid_request_error',
        code: 'expectation_failed',
        param: 'Expect',
      },
    });
  }
  // 100-continue is met as before: Node sends the interim 100, then the answer follows.
  const body = '{"name":"k"}';
  const continued = await exchange(
    `POST /auth/api-keys HTTP/1.1\r\nHost: x\r\nx-wallet-address: ${WALLET}\r\ncontent-type: application/json\r\n` +
      `Content-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n${body}`,
  );
  assert.deepEqual([continued.interim, continued.statusLine], [['HTTP/1.1 100 Continue'], 'HTTP/1.1 200 OK']);
});

test("an HTTP/1.1 request without Host → 400 invalid_request naming Host, not Node's bare 400; HTTP/1.0 needs none", async () => {
  const missing = await exchange('GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
  assert.equal(missing.statusLine, 'HTTP/1.1 400 Bad Request');
  assert.deepEqual(missing.body, {
    error: { message: 'An HTTP/1.1 request needs a Host header.', type: 'invalid_request_error', code: 'invalid_request', param: 'Host' },
  });
  const old = await exchange('GET /health HTTP/1.0\r\n\r\n');
  assert.match(old.statusLine, /^HTTP\/1\.1 200 /);
});

test('CONNECT (which Node drops without a word when nobody listens) → 405 method_not_allowed', async () => {
  const answer = await exchange('CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n');
  assert.equal(answer.statusLine, 'HTTP/1.1 405 Method Not Allowed');
  assert.deepEqual(answer.body, {
    error: { message: 'Method not allowed for this route.', type: 'invalid_request_error', code: 'method_not_allowed', param: null },
  });
});

test('requests the HTTP parser refuses get the OpenAI error body too: 431 for huge headers, 400 for garbage', async () => {
  const huge = await exchange(`GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
  assert.equal(huge.statusLine, 'HTTP/1.1 431 Request Header Fields Too Large');
  assert.match(huge.headers['content-type'], /^application\/json/);
  assert.deepEqual(huge.body, {
    error: {
      message: 'The request headers are larger than the limit.',
      type: 'invalid_request_error',
      code: 'request_header_too_large',
      param: null,
    },
  });
  const garbage = await exchange('THIS IS NOT HTTP\r\n\r\n');
  assert.equal(garbage.statusLine, 'HTTP/1.1 400 Bad Request');
  assert.equal(garbage.headers.connection, 'close');
  assert.deepEqual(garbage.body, {
    error: { message: 'The request is not valid HTTP.', type: 'invalid_request_error', code: 'invalid_request', param: null },
  });
});

test('a body nested past MAX_JSON_DEPTH → 400 invalid_request on every JSON route, before any handler (a chat tool schema too)', async () => {
  const deepGateway = await startTestGateway({ env: { BODY_LIMIT_BYTES: String(64 * 1024) } });
  try {
    const deep = '{"type":"object","properties":{"a":'.repeat(1000) + '{}' + '}}'.repeat(1000);
    const chat = `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`;
    const error = {
      message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
      type: 'invalid_request_error',
      code: 'invalid_request',
      param: null,
    };
    for (const [path, body] of [
      [CHAT, chat],
      ['/v1/responses', `{"input":"hi","metadata":${deep}}`],
      ['/auth/api-keys', `{"name":${deep}}`],
    ]) {
      await expectError(await fetch(`${deepGateway.url}${path}`, { method: 'POST', headers: walletHeaders(), body }), 400, error);
    }
  } finally {
    await deepGateway.stop();
  }
});

test('a body over BODY_LIMIT_BYTES → 413 request_too_large, with or without Content-Length', async () => {
  const error = {
    message: 'Request body is larger than the limit.',
    type: 'invalid_request_error',
    code: 'request_too_large',
    param: null,
  };
  const big = JSON.stringify({ pad: 'x'.repeat(BODY_LIMIT) });
  await expectError(await fetch(`${gateway.url}${CHAT}`, { method: 'POST', headers: walletHeaders(), body: big }), 413, error);

  // Chunked upload (no Content-Length): the limit applies while reading.
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${gateway.url}${CHAT}`, { method: 'POST', headers: walletHeaders() }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    for (let i = 0; i < 8; i++) req.write(`{"pad":"${'y'.repeat(BODY_LIMIT / 4)}`);
    req.end('"}');
  });
  assert.equal(chunked.status, 413);
  assert.deepEqual(JSON.parse(chunked.body), { error });

  // Just under the limit is read and parsed (then the chat schema answers: messages are missing).
  const fits = JSON.stringify({ pad: 'z'.repeat(BODY_LIMIT - 20) });
  assert.ok(Buffer.byteLength(fits) <= BODY_LIMIT);
  const parsed = await fetch(`${gateway.url}${CHAT}`, { method: 'POST', headers: walletHeaders(), body: fits });
  assert.equal(parsed.status, 400);
  assert.equal((await parsed.json()).error.param, 'messages');
});

test('echoed values are cut to 200 characters with an ellipsis (a 1 MB model name made a 1 MB error body)', async () => {
  const bigGateway = await startTestGateway({ env: { BODY_LIMIT_BYTES: String(2 * 1024 * 1024) } });
  try {
    const model = 'm'.repeat(1024 * 1024);
    const chat = await fetch(`${bigGateway.url}${CHAT}`, {
      method: 'POST',
      headers: walletHeaders(),
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await expectError(chat, 404, {
      message: `The model "${'m'.repeat(200)}…" does not exist.`,
      type: 'not_found_error',
      code: 'model_not_found',
      param: 'model',
    });
    const tool = await fetch(`${bigGateway.url}/mcp`, {
      method: 'POST',
      headers: walletHeaders(undefined, { accept: 'application/json, text/event-stream' }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't'.repeat(100_000), arguments: {} } }),
    });
    const text = (await tool.json()) as { result: { content: Array<{ text: string }> } };
    assert.equal(JSON.parse(text.result.content[0].text).error.message, `Unknown tool "${'t'.repeat(200)}…".`);
    // /v1/tools/execute's errors name the tool the body asked for: cut too (found by the fuzz test).
    const execute = await fetch(`${bigGateway.url}/v1/tools/execute`, {
      method: 'POST',
      headers: walletHeaders(),
      body: JSON.stringify({ tool: 'é'.repeat(100_000) }),
    });
    assert.equal(execute.status, 400);
    assert.equal(((await execute.json()) as { tool: string }).tool, `${'é'.repeat(200)}…`);
    // A key the client named, as a zod path: the param and the message are cut too.
    const key = 'k'.repeat(5000);
    const grant = await fetch(`${bigGateway.url}/auth/api-keys`, {
      method: 'POST',
      headers: walletHeaders(),
      body: JSON.stringify({ [key]: 1 }),
    });
    const refused = (await grant.json()) as { error: { message: string; param: string | null } };
    assert.equal(grant.status, 400);
    assert.ok(JSON.stringify(refused).length < 1000, JSON.stringify(refused).slice(0, 300));
  } finally {
    await bigGateway.stop();
  }
  const path = `/v1/${'p'.repeat(4000)}`;
  const missing = await fetch(`${gateway.url}${path}`, { headers: walletHeaders() });
  await expectError(missing, 404, {
    message: `No route for GET ${path.slice(0, 200)}….`,
    type: 'not_found_error',
    code: 'not_found',
    param: null,
  });
});

test('unknown route → 404 not_found; wrong method → 405 method_not_allowed; bad wallet → 400', async () => {
  await expectError(await fetch(`${gateway.url}/v1/nothing?x=1`, { headers: walletHeaders() }), 404, {
    message: 'No route for GET /v1/nothing.',
    type: 'not_found_error',
    code: 'not_found',
    param: null,
  });
  const wrong = await fetch(`${gateway.url}/health`, { method: 'POST' });
  assert.equal(wrong.headers.get('allow'), 'HEAD, GET');
  await expectError(wrong, 405, {
    message: 'Method not allowed for this route.',
    type: 'invalid_request_error',
    code: 'method_not_allowed',
    param: null,
  });
  await expectError(await fetch(`${gateway.url}/v1/models`), 400, {
    message: 'The x-wallet-address header is required.',
    type: 'invalid_request_error',
    code: 'invalid_wallet_address',
    param: 'x-wallet-address',
  });
  await expectError(await fetch(`${gateway.url}/v1/models`, { headers: { 'x-wallet-address': '0x1234' } }), 400, {
    message: 'x-wallet-address must be 0x followed by 40 hex characters; mixed case must be a valid EIP-55 checksum.',
    type: 'invalid_request_error',
    code: 'invalid_wallet_address',
    param: 'x-wallet-address',
  });
});

test('a body the server cannot decode → 415 unsupported_encoding or 400 invalid_body_encoding', async () => {
  await expectError(
    await fetch(`${gateway.url}${CHAT}`, {
      method: 'POST',
      headers: walletHeaders(undefined, { 'content-encoding': 'bogus' }),
      body: '{}',
    }),
    415,
    {
      message: 'Unsupported Content-Encoding; send the body as identity, gzip, deflate or br.',
      type: 'invalid_request_error',
      code: 'unsupported_encoding',
      param: null,
    },
  );
  await expectError(
    await fetch(`${gateway.url}${CHAT}`, {
      method: 'POST',
      headers: walletHeaders(undefined, { 'content-encoding': 'gzip' }),
      body: '{"a":1}',
    }),
    400,
    {
      message: 'The request body could not be decoded with its Content-Encoding.',
      type: 'invalid_request_error',
      code: 'invalid_body_encoding',
      param: null,
    },
  );
  // A body that is not brotli labelled br was a 500 (BrotliDecoder's "Decompression failed") on
  // every JSON route; each answers in its own shape (/v1/tools/execute adds ok and tool).
  for (const path of [CHAT, '/v1/responses', '/v1/tools/execute', '/mcp', '/auth/api-keys']) {
    const res = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: walletHeaders(undefined, { 'content-encoding': 'br', accept: 'application/json, text/event-stream' }),
      body: '{"a":1}',
    });
    assert.equal(res.status, 400, path);
    const body = (await res.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'invalid_body_encoding', path);
  }
  // A body that really is gzip is read (and then refused by the chat schema: messages are missing).
  const gzipped = await fetch(`${gateway.url}${CHAT}`, {
    method: 'POST',
    headers: walletHeaders(undefined, { 'content-encoding': 'gzip' }),
    body: gzipSync('{"a":1}'),
  });
  assert.equal(gzipped.status, 400);
  assert.equal((await gzipped.json()).error.param, 'messages');
});

test('anything unexpected → 500 with a generic message; the detail is only in the log (redacted)', async (t) => {
  // Fault injection: a /health contributor that throws an ordinary Error, as a buggy part would.
  const original = gateway.tools.health;
  t.after(() => Object.assign(gateway.tools, { health: original }));
  Object.assign(gateway.tools, {
    health: () => {
      throw new Error(`store exploded while holding ${API_KEY}`);
    },
  });
  const res = await fetch(`${gateway.url}/health`, { headers: { 'x-request-id': 'boom-1' } });
  const text = await res.clone().text();
  await expectError(res, 500, {
    message: 'The server had an error while processing your request.',
    type: 'server_error',
    code: 'internal_error',
    param: null,
  });
  assert.equal(text.includes('exploded'), false, 'no internals in the response');
  const line = gateway.logs.find((l) => l.reqId === 'boom-1');
  assert.equal(line?.level, 50);
  assert.equal(line?.status, 500);
  const err = line?.error as { code: string; details: string };
  assert.equal(err.code, 'internal_error');
  assert.match(err.details, /^Error: store exploded while holding sy_\[redacted\]\n    at /);
});

test('a client that leaves halfway through sending its body: logged as 499, no internal error', async () => {
  const { port } = new URL(gateway.url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const headers = Object.entries({
    ...walletHeaders(),
    'content-type': 'application/json',
    'content-length': '1000',
    'x-request-id': 'gone-1',
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`POST ${CHAT} HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}\r\n{"model":"conductor",`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 100 && !line; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    line = gateway.logs.find((l) => l.reqId === 'gone-1');
  }
  assert.equal(line?.status, 499);
  assert.equal(line?.level, 30, 'not an error of ours');
  assert.equal(line?.error, undefined);
});

// The 503 of a gateway that cannot serve (its store fails) is in accounts/store-health.test.ts.
test('/health: 200 degraded when a part is degraded, with the store reported up', async (t) => {
  const original = gateway.tools.health;
  t.after(() => Object.assign(gateway.tools, { health: original }));
  Object.assign(gateway.tools, { health: () => ({ fields: {}, degraded: true }) });
  const degraded = await fetch(`${gateway.url}/health`);
  assert.equal(degraded.status, 200);
  const body = (await degraded.json()) as { status: string; store: string };
  assert.equal(body.status, 'degraded');
  assert.equal(body.store, 'up');
});
