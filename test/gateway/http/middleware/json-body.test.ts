/**
 * The body reader on a bare Koa app served on 127.0.0.1: every way decoding a body can fail is a
 * 400 invalid_body_encoding, bodies nested deeper than MAX_JSON_DEPTH are refused before any
 * handler sees them, and a client that leaves mid-upload ends the request even behind a decoder.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import Koa from 'koa';
import { errorHandler } from '../../../../gateway/http/middleware/error-handler.js';
import { jsonBody, MAX_JSON_DEPTH, nestsDeeperThan } from '../../../../gateway/http/middleware/json-body.js';
import { rawExchange } from '../../../helpers/raw-http.js';

let server: Server;
let url: string;

/** A request by its x-request-id: when it reached the body reader, and its status once it is over. */
interface Tracked {
  reached: Promise<void>;
  over: Promise<number>;
  reach(): void;
  end(status: number): void;
}
const requests = new Map<string, Tracked>();
/** The request's record, made by whichever asks first: the test or the app. */
function tracked(id: string): Tracked {
  let record = requests.get(id);
  if (!record) {
    const made: Partial<Tracked> = {};
    made.reached = new Promise<void>((resolve) => (made.reach = resolve));
    made.over = new Promise<number>((resolve) => (made.end = resolve));
    record = made as Tracked;
    requests.set(id, record);
  }
  return record;
}

before(async () => {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      tracked(ctx.get('x-request-id')).end(ctx.status);
    }
  });
  app.use(errorHandler());
  app.use((ctx, next) => {
    tracked(ctx.get('x-request-id')).reach();
    return next();
  });
  app.use(jsonBody(1024 * 1024));
  app.use((ctx) => void (ctx.body = { ok: true, body: ctx.request.body }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function post(body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: await res.json() };
}

const INVALID_BODY_ENCODING = {
  message: 'The request body could not be decoded with its Content-Encoding.',
  type: 'invalid_request_error',
  code: 'invalid_body_encoding',
  param: null,
};

test('every body its Content-Encoding does not decode is 400 invalid_body_encoding (br, gzip, deflate; garbage, cut, mislabelled)', async () => {
  const json = '{"a":1}';
  const cases: Array<[string, string, Uint8Array<ArrayBuffer>]> = [
    ['br', 'plain JSON labelled br (was a 500: BrotliDecoder "Decompression failed")', Buffer.from(json)],
    ['br', 'a cut brotli stream', brotliCompressSync(json.repeat(50)).subarray(0, 10)],
    ['br', 'gzip labelled br', gzipSync(json)],
    ['gzip', 'plain JSON labelled gzip', Buffer.from(json)],
    ['gzip', 'a cut gzip stream', gzipSync(json).subarray(0, 12)],
    ['deflate', 'plain JSON labelled deflate', Buffer.from(json)],
    ['deflate', 'raw deflate without its zlib header', deflateRawSync(json)],
    ['deflate', 'brotli labelled deflate', brotliCompressSync(json)],
  ];
  for (const [encoding, what, body] of cases) {
    const answer = await post(body, { 'content-encoding': encoding });
    assert.deepEqual(answer, { status: 400, body: { error: INVALID_BODY_ENCODING } }, what);
  }
  // Bodies that really are what they say are read.
  for (const [encoding, body] of [
    ['br', brotliCompressSync(json)],
    ['gzip', gzipSync(json)],
    ['deflate', deflateSync(json)],
  ] as const) {
    assert.deepEqual(await post(body, { 'content-encoding': encoding }), { status: 200, body: { ok: true, body: { a: 1 } } }, encoding);
  }
  // A coding there is no decoder for is a 415, as before.
  const unknown = await post(json, { 'content-encoding': 'compress' });
  assert.equal(unknown.status, 415);
  assert.equal(unknown.body.error.code, 'unsupported_encoding');
});

test('only POST, PUT and PATCH bodies are read: a GET or a DELETE is answered whatever body it carries (a text one was a 415)', async () => {
  for (const method of ['GET', 'DELETE']) {
    for (const [headers, body] of [
      ['content-type: text/plain', 'not json'],
      ['content-type: application/json\r\ncontent-encoding: br', 'not brotli'],
      ['content-type: application/json', nestedArrays(1000)],
    ]) {
      const answer = await rawExchange(
        url,
        `${method} / HTTP/1.1\r\nHost: x\r\n${headers}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
      assert.equal(answer?.status, 200, `${method} ${headers}`);
    }
  }
});

/** `depth` arrays inside one another, as JSON text. */
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

test(`bodies nested more than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) levels are 400 invalid_request naming the limit`, async () => {
  const refusal = {
    status: 400,
    body: {
      error: {
        message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: null,
      },
    },
  };
  // The object is level 1, its array level 2.
  assert.equal((await post(`{"a":${nestedArrays(MAX_JSON_DEPTH - 1)}}`)).status, 200);
  assert.deepEqual(await post(`{"a":${nestedArrays(MAX_JSON_DEPTH)}}`), refusal);
  // Deep enough to overflow a recursive walk (and JSON.stringify) many times over.
  assert.deepEqual(await post(nestedArrays(100_000)), refusal);
  assert.deepEqual(await post(`${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`), refusal);
});

test('nestsDeeperThan counts arrays and objects alike, wide or deep, without recursing', () => {
  assert.equal(nestsDeeperThan('text', 0), false);
  assert.equal(nestsDeeperThan(null, 0), false);
  assert.equal(nestsDeeperThan({}, 1), false);
  assert.equal(nestsDeeperThan({}, 0), true);
  assert.equal(nestsDeeperThan({ a: [{ b: [] }] }, 4), false);
  assert.equal(nestsDeeperThan({ a: [{ b: [] }] }, 3), true);
  // Only the deepest branch counts, wherever it is.
  const wide = Array.from({ length: 1000 }, (_, i) => (i === 777 ? [[[1]]] : i));
  assert.equal(nestsDeeperThan(wide, 4), false);
  assert.equal(nestsDeeperThan(wide, 3), true);
  assert.equal(nestsDeeperThan(JSON.parse(nestedArrays(1_000_000)), MAX_JSON_DEPTH), true);
});

// Before the fix the request never ended: the timeout turns that into a failure.
test(
  'a client that leaves mid-upload behind a decoder ends its request (it waited forever: inflation never hears of the abort)',
  { timeout: 30_000 },
  async () => {
    const whole = gzipSync(JSON.stringify({ pad: 'x'.repeat(30_000) }));
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nx-request-id: gzip-gone\r\ncontent-type: application/json\r\n' +
        `content-encoding: gzip\r\ncontent-length: ${whole.length}\r\n\r\n`,
    );
    socket.write(whole.subarray(0, 40));
    await tracked('gzip-gone').reached; // leave once the request is at the body reader
    socket.destroy();
    assert.equal(await tracked('gzip-gone').over, 499);
  },
);

test('a body sent as it is reads as the same body gzip-encoded does (koa-body): BOM dropped, empty is {}, UTF-8 kept, the same refusals', async () => {
  const cases: string[] = [
    '{"a":1,"text":"héllo ✓ 𝄞"}',
    '\ufeff{"bom":true}',
    '',
    '  \n[1,2,3]',
    '"scalar"',
    '42',
    '{"a":',
    '{"__proto__":{"admin":true}}',
    `{"big":"${'x'.repeat(1024 * 1024)}"}`,
  ];
  for (const body of cases) {
    const plain = await post(body);
    const gzipped = await post(gzipSync(Buffer.from(body)), { 'content-encoding': 'gzip' });
    assert.deepEqual(plain, gzipped, JSON.stringify(body.slice(0, 40)));
  }
  assert.deepEqual((await post('\ufeff{"bom":true}')).body, { ok: true, body: { bom: true } });
  assert.deepEqual((await post('')).body, { ok: true, body: {} });
  assert.equal((await post(`{"big":"${'x'.repeat(1024 * 1024)}"}`)).status, 413);
  assert.equal((await post('"scalar"')).body.error.code, 'invalid_json');
});

test('a body shorter than its Content-Length is refused, not waited for past the client', async () => {
  // The client declares 100 bytes, sends 10 and closes: the read ends and the request is over.
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.end(
    'POST / HTTP/1.1\r\nHost: x\r\nx-request-id: short-body\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a":12345',
  );
  await tracked('short-body').over;
  socket.destroy();
});
