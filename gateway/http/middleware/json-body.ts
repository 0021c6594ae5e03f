import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import getRawBody from 'raw-body';
import { parse as parseJsonSafely } from '@hapi/bourne';
import { GatewayError, InvalidRequest } from '../../errors.js';
import { unlessClientLeaves } from '../client-disconnect.js';

/** Bodies are JSON: application/json or any +json type. */
const JSON_TYPES = ['json', '+json'];

/** The methods whose body is read (koa-body's own default); a GET's or a DELETE's has no meaning and is left alone. */
const METHODS_WITH_BODY = ['POST', 'PUT', 'PATCH'];

/**
 * How deep arrays and objects may nest in a body: serde_json's default. JSON.parse does not
 * recurse, but what handles the value after it may (JSON.stringify on the way to a tool server,
 * a schema validator): `args` 5,000 levels deep overflowed the stack on /v1/tools/execute. The
 * deepest request of ours (a chat's `tools` with a nested JSON Schema) needs a few dozen levels.
 */
export const MAX_JSON_DEPTH = 128;

/** The client closed the connection while sending its body: nobody to answer (logged as 499). */
export class BodyAborted extends Error {
  constructor() {
    super('The client closed the connection while sending the request body.');
    this.name = 'BodyAborted';
  }
}

/** What co-body's strict mode accepts before parsing: an object or an array (RFC 7159 whitespace first). */
const OBJECT_OR_ARRAY = /^[\x20\x09\x0a\x0d]*[[{]/;

/**
 * Read a JSON request body of at most `limitBytes` into `ctx.request.body`. Routes put it last in
 * their guard chain, so a body is read only once the caller is known, and read failures
 * (invalid_json, request_too_large, invalid_body_encoding, a body nested deeper than
 * MAX_JSON_DEPTH) get the route's own error shape. A body of another type is 415: koa-body would
 * skip it and the route would then see "no fields" (a text/plain grant would fail as "address:
 * expected string").
 *
 * A body sent as it is (no Content-Encoding, the usual case) is read with raw-body and parsed
 * with @hapi/bourne directly, as koa-body's co-body would, without its per-request layers (a
 * second media-type match, option copies, iconv's decoder: ~6 µs of a chat's CPU, issue 39); an
 * encoded body goes through koa-body, which decodes it.
 *
 * @example
 *   router.post('/v1/chat/completions', requireWallet(), jsonBody(4 * 1024 * 1024), handler)
 */
export function jsonBody(limitBytes: number): Middleware {
  const parse = koaBody({
    json: true,
    jsonTypes: JSON_TYPES,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonStrict: true,
    jsonLimit: limitBytes,
    // koa-body hands this only failures of reading and parsing, never those of the routes after it.
    onError: (err, ctx) => {
      throw bodyReadFailure(err, ctx);
    },
  });
  const bodyRead = () => Promise.resolve();
  return async function readJsonBody(ctx, next) {
    if (!METHODS_WITH_BODY.includes(ctx.method)) return next();
    const json = bodyIsJson(ctx);
    if (!json && hasBody(ctx)) {
      throw new GatewayError({ status: 415, code: 'unsupported_media_type', message: 'Send the body as application/json.' });
    }
    if (json) {
      const encoding = ctx.get('content-encoding');
      // Behind a decoder (Content-Encoding) the reader never hears that the client left: inflation
      // pipes the request into zlib, which just stops. Without this the read, and whatever slot the
      // request holds, would wait forever.
      const read = encoding === '' || encoding === 'identity' ? readPlainJson(ctx, limitBytes) : parse(ctx, bodyRead);
      await unlessClientLeaves(ctx, read, () => new BodyAborted());
    }
    if (nestsDeeperThan(ctx.request.body, MAX_JSON_DEPTH)) {
      throw new InvalidRequest(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
    }
    return next();
  };
}

/** A body without Content-Encoding: its bytes (raw-body's length and limit checks), UTF-8 without a BOM, parsed as co-body's strict mode does. */
async function readPlainJson(ctx: Context, limitBytes: number): Promise<void> {
  const length = ctx.get('content-length');
  let text: string;
  try {
    // The declared length as co-body takes it (`~~`: a value that is no number counts as 0).
    text = (await getRawBody(ctx.req, { limit: limitBytes, length: length === '' ? null : ~~length })).toString('utf8');
  } catch (err) {
    throw bodyReadFailure(err as Error, ctx);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text === '') {
    ctx.request.body = {};
    return;
  }
  try {
    if (!OBJECT_OR_ARRAY.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
    ctx.request.body = parseJsonSafely(text, { protoAction: 'error' });
  } catch {
    throw invalidJson();
  }
}

/** Whether the request has a body of a JSON type (application/json or any +json), as the reader reads it. */
export function bodyIsJson(ctx: Context): boolean {
  return Boolean(ctx.is(JSON_TYPES));
}

function hasBody(ctx: Context): boolean {
  return Number(ctx.get('content-length')) > 0 || ctx.get('transfer-encoding') !== '';
}

/**
 * Whether `value` nests arrays or objects more than `limit` levels deep (the top level is 1). It
 * walks with its own stack: a check that recursed would overflow on the very bodies it is for.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: object[] = [];
  const depths: number[] = [];
  if (typeof value === 'object' && value !== null) {
    pending.push(value);
    depths.push(1);
  }
  while (pending.length > 0) {
    const node = pending.pop() as Record<string, unknown>;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    for (const key in node) {
      const child = node[key];
      if (typeof child === 'object' && child !== null) {
        pending.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

function invalidJson(): GatewayError {
  return new GatewayError({ status: 400, code: 'invalid_json', message: 'Request body is not valid JSON.' });
}

/**
 * What a failure to read the body means for the client. Beyond the parsers' own errors (raw-body,
 * co-body and inflation mark theirs with an http-errors `status` or `type`), any failure while a
 * Content-Encoding is decoded is the body's: zlib and brotli throw plain errors with codes of
 * their own (`Z_DATA_ERROR`, `ERR__ERROR_FORMAT_PADDING_1`, …), none of them a fault of ours.
 */
function bodyReadFailure(err: Error, ctx: Context): Error {
  if (err instanceof GatewayError) return err;
  const e = err as Error & { status?: unknown; type?: unknown };
  if (e.type === 'request.aborted') return new BodyAborted();
  if (e.status === 413 || e.type === 'entity.too.large') {
    return new GatewayError({ status: 413, code: 'request_too_large', message: 'Request body is larger than the limit.' });
  }
  // co-body rethrows JSON.parse's SyntaxError, and its own for a strict-mode scalar, with status 400.
  if (e.status === 400 && err instanceof SyntaxError) return invalidJson();
  // inflation's bare 415 for a Content-Encoding it has no decoder for.
  if (e.status === 415) {
    return new GatewayError({
      status: 415,
      code: 'unsupported_encoding',
      message: 'Unsupported Content-Encoding; send the body as identity, gzip, deflate or br.',
    });
  }
  const encoding = ctx.get('content-encoding');
  if (encoding !== '' && encoding !== 'identity') {
    return new GatewayError({
      status: 400,
      code: 'invalid_body_encoding',
      message: 'The request body could not be decoded with its Content-Encoding.',
      details: err.message,
    });
  }
  return err;
}
