/**
 * Malformed requests for every operation of an OpenAPI document, generated with fast-check from a
 * seed. Each request is one mutation of a valid one: the operation's method, path, security and
 * required parameters, and a body sampled from its own request schema (openapi-sampler), made valid
 * with the few values a schema cannot know (`VALID_VALUES`: a model and a tool that exist). The
 * mutations (`KINDS`) break one thing each: a field's type or presence, a value's size, depth or
 * characters, the JSON itself, the media type, the Content-Encoding, the framing, the request line,
 * the method, the path, the query, the wallet, the key, the headers.
 *
 * @example
 *   const cases = malformedRequests(operationsOf(document), { seed: 37, credentialsFor })
 *   for (const request of cases) await rawExchange(url, wire(request))
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { sample } from 'openapi-sampler';

type Json = Record<string, any>;

/** One operation of the document, with its $refs resolved. */
export interface Operation {
  /** `POST /v1/tools/execute` */
  id: string;
  method: string;
  /** The OpenAPI path, e.g. `/auth/api-keys/{id}`. */
  path: string;
  /** Matches the concrete paths of this operation. */
  pattern: RegExp;
  spec: Json;
}

/** A request as it goes on the wire. */
export interface MalformedRequest {
  operation: Operation;
  /** What was broken, for the report. */
  kind: string;
  method: string;
  /** Path and query, as sent. */
  target: string;
  headers: Array<[string, string]>;
  body?: Buffer;
  /** Send `Host` (HTTP/1.1 requires it). */
  host: boolean;
  /** Bytes sent instead of everything above (a broken request line, broken framing). */
  raw?: Buffer;
}

/** What a request needs to get past the door: the headers its security asks for, per scheme. */
export interface Credentials {
  walletAddress?: string;
  bearerKey?: string;
  adminToken?: string;
}

export interface GeneratorOptions {
  seed: number;
  /** Random cases per operation beyond one of every kind. */
  extra: number;
  /** Who calls each operation (its own wallet, so each one's ledger can be checked alone). */
  credentialsFor(operation: Operation): Credentials;
  /** The body limit: generated bodies stay under it, so the gateway reads each one whole before it answers. */
  bodyLimitBytes: number;
}

/** The document's operations. `resolved` has every $ref replaced (see @seriousme/openapi-schema-validator). */
export function operationsOf(resolved: Json): Operation[] {
  return Object.entries(resolved.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, spec]) => ({
      id: `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase(),
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      spec: spec as Json,
    })),
  );
}

/** One request of every kind for each operation, then `extra` of random kinds: deterministic for a seed. */
export function malformedRequests(operations: Operation[], options: GeneratorOptions): MalformedRequest[] {
  return operations.flatMap((operation) => {
    const base = validRequest(operation, options);
    const kinds = Object.entries(KINDS).map(([kind, make]) => make(base, options).map((request) => ({ ...request, kind })));
    const seed = options.seed ^ hash(operation.id);
    const oneOfEach = fc.sample(fc.tuple(...kinds), { seed, numRuns: 1 })[0];
    const random = fc.sample(fc.oneof(...kinds), { seed: seed + 1, numRuns: options.extra });
    return [...oneOfEach, ...random];
  });
}

/** The request as bytes: a request line, Host, the headers, Content-Length for a body, Connection: close. */
export function wire(request: MalformedRequest): Buffer {
  if (request.raw) return request.raw;
  const lines = [`${request.method} ${request.target} HTTP/1.1`];
  if (request.host) lines.push('Host: 127.0.0.1');
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  const framed = request.headers.some(([name]) => /^(content-length|transfer-encoding)$/i.test(name));
  if (request.body && !framed) lines.push(`Content-Length: ${request.body.length}`);
  lines.push('Connection: close');
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), request.body ?? Buffer.alloc(0)]);
}

/** The value of a request header as sent (the last one). */
export function headerOf(request: MalformedRequest, name: string): string | undefined {
  return request.headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).at(-1)?.[1];
}

/**
 * Values a schema cannot know, by property name: without them a sampled body names a model or a
 * tool that does not exist, and every mutation of it stops at the same 404.
 */
const VALID_VALUES: Record<string, (credentials: Credentials) => unknown> = {
  model: () => 'conductor',
  tool: () => 'echo',
  args: () => ({ text: 'fuzz' }),
  method: () => 'tools/call',
  params: () => ({ name: 'echo', arguments: { text: 'fuzz' } }),
  address: (credentials) => credentials.walletAddress,
};

/** Header values a schema cannot know, by header name (one Idempotency-Key per operation: a repeat is a replay or a 409). */
const VALID_HEADERS: Record<string, (operation: Operation) => string> = {
  accept: () => 'application/json, text/event-stream',
  'idempotency-key': (operation) => `fuzz ${operation.id}`,
};

/** A body in the making: a JSON value whose marker strings stand for raw JSON text (numbers JSON.stringify cannot write, nesting it would overflow on). */
interface JsonBody {
  value: unknown;
  raw: Array<[marker: string, text: string]>;
}

/** The valid request each mutation starts from; its body as JSON, kept apart for the body mutations. */
interface BaseRequest extends MalformedRequest {
  json: unknown;
}

function validRequest(operation: Operation, options: GeneratorOptions): BaseRequest {
  const credentials = options.credentialsFor(operation);
  const headers: Array<[string, string]> = [];
  // The fewest schemes the document asks for (free mode: the wallet header alone).
  const schemes = Object.keys(((operation.spec.security ?? []) as Json[])[0] ?? {});
  if (schemes.includes('walletAddress') && credentials.walletAddress) headers.push(['x-wallet-address', credentials.walletAddress]);
  if (schemes.includes('bearerKey') && credentials.bearerKey) headers.push(['authorization', `Bearer ${credentials.bearerKey}`]);
  if (schemes.includes('adminToken') && credentials.adminToken) headers.push(['authorization', `Bearer ${credentials.adminToken}`]);
  let path = operation.path;
  for (const parameter of (operation.spec.parameters ?? []) as Json[]) {
    const value = parameter.name === 'address' ? credentials.walletAddress : String(sample(parameter.schema));
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
    if (parameter.in === 'header' && parameter.required) {
      headers.push([parameter.name, VALID_HEADERS[parameter.name.toLowerCase()]?.(operation) ?? String(sample(parameter.schema))]);
    }
  }
  const schema = operation.spec.requestBody?.content?.['application/json']?.schema as Json | undefined;
  let json: unknown = {};
  if (schema) {
    json = sample(schema, { skipNonRequired: true, quiet: true });
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
      for (const name of declaredProperties(schema)) {
        const valid = VALID_VALUES[name]?.(credentials);
        if (valid !== undefined) (json as Json)[name] = valid;
      }
    }
    headers.push(['content-type', 'application/json']);
  }
  const request = { operation, kind: 'valid', method: operation.method, target: path, headers, host: true, json };
  return schema ? { ...request, body: Buffer.from(JSON.stringify(json)) } : request;
}

/** The properties a body schema declares, or its first alternative does. */
function declaredProperties(schema: Json): string[] {
  if (schema.properties) return Object.keys(schema.properties as Json);
  const first = (schema.anyOf ?? schema.oneOf)?.[0] as Json | undefined;
  return first ? declaredProperties(first) : [];
}

type Path = Array<string | number>;

/** Every path into a JSON value, the root first. */
function pathsOf(value: unknown, at: Path = []): Path[] {
  const paths = [at];
  if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) paths.push(...pathsOf(child, [...at, Array.isArray(value) ? Number(key) : key]));
  }
  return paths;
}

const REMOVE = Symbol('remove');

/** A copy of `value` with the value at `path` replaced (or removed). */
function replaced(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement === REMOVE ? undefined : replacement;
  const copy = structuredClone(value) as Json;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Json;
  const last = path[path.length - 1];
  if (replacement === REMOVE) {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else parent[last] = replacement;
  return copy;
}

function jsonText(body: JsonBody): string {
  let text = JSON.stringify(body.value) ?? '';
  for (const [marker, raw] of body.raw) text = text.replace(JSON.stringify(marker), raw);
  return text;
}

/** The base request with another JSON body (Content-Length follows). */
function withBody(base: BaseRequest, body: JsonBody | string | Buffer): MalformedRequest {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : jsonText(body));
  const headers = base.headers.some(([name]) => name === 'content-type')
    ? base.headers
    : [...base.headers, ['content-type', 'application/json']];
  return { ...base, headers: headers as Array<[string, string]>, body: bytes };
}

function withHeader(base: MalformedRequest, name: string, value: string): MalformedRequest {
  return { ...base, headers: [...base.headers.filter(([n]) => n.toLowerCase() !== name.toLowerCase()), [name, value]] };
}

/** The bytes of the request with its request line (or its framing) replaced. */
function rawRequest(base: BaseRequest, head: string, body: Buffer = base.body ?? Buffer.alloc(0)): MalformedRequest {
  return { ...base, raw: Buffer.concat([Buffer.from(head, 'utf8'), body]) };
}

function headerLines(request: MalformedRequest): string {
  return request.headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
}

/** Any JSON value, of any type, small. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Strings that are awkward in one way each. */
const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u202e\u0041',
    '🦀'.repeat(50),
    '__proto__',
    'constructor',
    '../../etc/passwd',
    '%00',
    '\r\nX-Injected: 1',
  ),
);

/** Raw JSON text for a string with a lone surrogate, a number JSON.stringify cannot write, or one past exact integers. */
const rawToken = fc.constantFrom(
  '"\\ud800"',
  '"\\udfff x"',
  '1e400',
  '-1e400',
  '123456789012345678901234567890',
  '-0',
  '1e-400',
  '9007199254740993',
);

/** Header values a client might send by mistake, or on purpose. */
const oddHeaderValue = fc.oneof(
  fc.constantFrom('', ' ', 'null', 'undefined', '0', '-1', 'x'.repeat(300), 'é', '\t'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).filter((s) => !/[\r\n]/.test(s)),
);

type Kind = (base: BaseRequest, options: GeneratorOptions) => fc.Arbitrary<MalformedRequest>;

/** A mutation of the body's JSON at one of its paths. */
function atSomePath(base: BaseRequest, mutate: (path: Path) => fc.Arbitrary<JsonBody>): fc.Arbitrary<MalformedRequest> {
  return fc
    .constantFrom(...pathsOf(base.json))
    .chain(mutate)
    .map((body) => withBody(base, body));
}

const MARKER = '\u2063raw\u2063';

/** Each kind of malformation; every operation gets one of each. */
const KINDS: Record<string, Kind> = {
  'wrong type': (base) => atSomePath(base, (path) => anyJson.map((value) => ({ value: replaced(base.json, path, value), raw: [] }))),
  'missing field': (base) => {
    const paths = pathsOf(base.json).filter((path) => path.length > 0);
    if (paths.length === 0) return fc.constant(withBody(base, '{}'));
    return fc.constantFrom(...paths).map((path) => withBody(base, { value: replaced(base.json, path, REMOVE), raw: [] }));
  },
  'unknown field': (base) => {
    const objects = pathsOf(base.json).filter((path) => isObjectAt(base.json, path));
    return fc
      .record({ path: fc.constantFrom(...(objects.length ? objects : [[]])), key: oddString, value: anyJson })
      .map(({ path, key, value }) => withBody(base, { value: addedKey(base.json, path, key, value), raw: [] }));
  },
  'huge value': (base, options) => {
    // Under the body limit (and small where nothing reads the body), so the answer comes after the whole body is in.
    const room = base.operation.spec.requestBody ? Math.floor(options.bodyLimitBytes / 4) : 4000;
    const huge = fc.oneof(
      fc.integer({ min: Math.floor(room / 2), max: room }).map((n) => 'x'.repeat(n)),
      fc.integer({ min: Math.floor(room / 8), max: Math.floor(room / 4) }).map((n) => 'é✓'.repeat(n)),
      fc.integer({ min: Math.floor(room / 20), max: Math.floor(room / 10) }).map((n) => Array.from({ length: n }, (_, i) => i)),
    );
    return atSomePath(base, (path) => huge.map((value) => ({ value: replaced(base.json, path, value), raw: [] })));
  },
  'deep nesting': (base) =>
    atSomePath(base, (path) =>
      fc.record({ depth: fc.integer({ min: 129, max: 12_000 }), arrays: fc.boolean() }).map(({ depth, arrays }) => ({
        value: replaced(base.json, path, MARKER),
        raw: [[MARKER, arrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`]],
      })),
    ),
  'odd number or string': (base) =>
    atSomePath(base, (path) => rawToken.map((token) => ({ value: replaced(base.json, path, MARKER), raw: [[MARKER, token]] }))),
  'odd characters': (base) => atSomePath(base, (path) => oddString.map((value) => ({ value: replaced(base.json, path, value), raw: [] }))),
  'not JSON': (base) =>
    fc
      .oneof(
        fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }).map((text) => Buffer.from(text)),
        fc
          .constantFrom('{"a":', "{'a': 1}", '{"a":1}}', '{"__proto__":{"x":1}}', '{"a":1,"a":2}', '\ufeff{}', '{}{}', '{"a":1}garbage')
          .map((t) => Buffer.from(t)),
      )
      .map((bytes) => withBody(base, bytes)),
  'not an object': (base) =>
    fc
      .oneof(
        fc.constantFrom('null', '1', '"text"', '[]', 'true', '   ', '[{}]', '[null]'),
        fc.integer({ min: 0, max: 150 }).map(
          (n) =>
            `[${Array(n)
              .fill(base.body?.toString() || '{}')
              .join(',')}]`,
        ),
      )
      .map((text) => withBody(base, text)),
  'media type': (base) =>
    fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/vnd.fuzz+json',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/jsonx',
        'a/b/c',
        '',
        'APPLICATION/JSON',
      )
      .map((type) => withHeader(withBody(base, base.body ?? '{}'), 'content-type', type)),
  'broken encoding': (base) =>
    fc
      .record({
        encoding: fc.constantFrom('br', 'gzip', 'deflate'),
        how: fc.constantFrom('plain', 'cut', 'random', 'other codec'),
        noise: fc.uint8Array({ minLength: 1, maxLength: 64 }),
      })
      .map(({ encoding, how, noise }) => {
        const text = base.body ?? Buffer.from('{}');
        const encoded = { br: brotliCompressSync, gzip: gzipSync, deflate: deflateSync }[encoding](text);
        const other = encoding === 'br' ? gzipSync(text) : brotliCompressSync(text);
        const bytes = {
          plain: text,
          cut: encoded.subarray(0, Math.max(1, encoded.length - 5)),
          random: Buffer.from(noise),
          'other codec': other,
        }[how];
        return withHeader(withBody(base, bytes), 'content-encoding', encoding);
      }),
  'other encoding': (base) =>
    fc
      .constantFrom('compress', 'zstd', 'GZIP', 'gzip, br', 'identity', 'x-gzip', 'br;q=1', 'gzip (valid)', 'br (valid)', 'deflate (valid)')
      .map((label) => {
        const text = base.body ?? Buffer.from('{}');
        const valid = /^(\w+) \(valid\)$/.exec(label);
        if (!valid) return withHeader(withBody(base, text), 'content-encoding', label);
        const encode = { br: brotliCompressSync, gzip: gzipSync, deflate: deflateSync }[valid[1] as 'br' | 'gzip' | 'deflate'];
        return withHeader(withBody(base, encode(text)), 'content-encoding', valid[1]);
      }),
  expect: (base) =>
    fc
      .oneof(
        fc.constantFrom('100-continue', '100-Continue', 'foo', 'continue', '200-ok', '100-continue, foo'),
        fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 }).filter((s) => /^[!-~]+$/.test(s)),
      )
      .map((value) => withHeader(base, 'expect', value)),
  'no Host': (base) => fc.constant({ ...base, host: false }),
  'huge headers': (base) =>
    fc
      .record({
        name: fc.constantFrom('x-pad', 'x-wallet-address', 'authorization', 'cookie', 'x-request-id'),
        size: fc.integer({ min: 17_000, max: 24_000 }),
      })
      .map(({ name, size }) => withHeader(base, name, 'a'.repeat(size))),
  'request line': (base) =>
    fc
      .constantFrom(
        `G@T ${base.target} HTTP/1.1`,
        `${base.method}  ${base.target} HTTP/1.1`,
        `${base.method} ${base.target} HTTP/9.9`,
        `${base.method} ${base.target} http/1.1`,
        `${base.method} ${base.target}`,
        `${base.method} ${base.target} HTTP/1.1 extra`,
        `${base.method} /a b${base.target} HTTP/1.1`,
        `${base.method} http://evil.example${base.target} HTTP/1.1`,
        `PRI * HTTP/2.0`,
        '\u0000\u0001\u0002',
      )
      .map((line) => rawRequest(base, `${line}\r\nHost: 127.0.0.1\r\n${headerLines(withContentLength(base))}Connection: close\r\n\r\n`)),
  framing: (base) =>
    fc
      .constantFrom(
        'length and chunked',
        'bad chunk size',
        'two lengths',
        'negative length',
        'length not a number',
        'chunk extension',
        'transfer-encoding gzip',
        'bare LF',
        'folded header',
      )
      .map((how) => {
        const body = base.body ?? Buffer.from('{}');
        const line = `${base.method} ${base.target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLines(base)}`;
        const chunked = `${body.length.toString(16)}\r\n${body.toString('latin1')}\r\n0\r\n\r\n`;
        const heads: Record<string, string> = {
          'length and chunked': `${line}Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked}`,
          'bad chunk size': `${line}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n${body.toString('latin1')}\r\n0\r\n\r\n`,
          'two lengths': `${line}Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}\r\nConnection: close\r\n\r\n${body.toString('latin1')}`,
          'negative length': `${line}Content-Length: -1\r\nConnection: close\r\n\r\n`,
          'length not a number': `${line}Content-Length: ten\r\nConnection: close\r\n\r\n`,
          'chunk extension': `${line}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)};x=y\r\n${body.toString('latin1')}\r\n0\r\n\r\n`,
          'transfer-encoding gzip': `${line}Transfer-Encoding: gzip\r\nConnection: close\r\n\r\n${body.toString('latin1')}`,
          'bare LF': `${base.method} ${base.target} HTTP/1.1\nHost: 127.0.0.1\n${headerLines(withContentLength(base)).replaceAll('\r\n', '\n')}Connection: close\n\n${body.toString('latin1')}`,
          'folded header': `${line}X-Folded: a\r\n b\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString('latin1')}`,
        };
        return { ...base, raw: Buffer.from(heads[how], 'latin1') };
      }),
  method: (base) =>
    fc
      .constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'SEARCH', 'PURGE', 'CONNECT')
      .filter((method) => method !== base.method)
      .map((method) => (method === 'CONNECT' ? { ...base, method, target: '127.0.0.1:443' } : { ...base, method })),
  path: (base) => {
    const parameters = ((base.operation.spec.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
    const odd = fc.oneof(
      fc.constantFrom('%zz', '%00', '..%2F..%2F', '%2F', '%E0%A4%A', '', 'x'.repeat(5000), encodeURIComponent('é✓🦀'), '%25'),
      fc.string({ unit: 'binary', maxLength: 30 }).map((s) => encodeURIComponent(s)),
    );
    if (parameters.length > 0) {
      return odd.map((value) => ({ ...base, target: targetWith(base, parameters[0].name as string, value) }));
    }
    return fc
      .constantFrom('/', '//', '/x', '%zz', '/..', ';x', '%2F', '/%00')
      .map((suffix) => ({ ...base, target: `${base.target}${suffix}` }));
  },
  query: (base) => {
    const declared = ((base.operation.spec.parameters ?? []) as Json[]).filter((p) => p.in === 'query').map((p) => p.name as string);
    const name = fc.oneof(
      fc.constantFrom(...declared, 'a[b]', 'limit', '__proto__', ''),
      fc.string({ unit: 'grapheme-ascii', maxLength: 10 }),
    );
    const value = fc.oneof(fc.constantFrom('', '-1', '1e400', 'NaN', 'x'.repeat(3000), '%zz', '%00', 'true'), fc.string({ maxLength: 20 }));
    return fc
      .array(fc.tuple(name, value), { minLength: 1, maxLength: 6 })
      .map((pairs) => ({ ...base, target: `${base.target}?${pairs.map(([n, v]) => `${encodeQuery(n)}=${encodeQuery(v)}`).join('&')}` }));
  },
  wallet: (base) =>
    fc
      .oneof(
        fc.constantFrom(
          '',
          '0x',
          '0x1234',
          '0x52908400098527886E0F7030069857D2E4169EE8',
          '0xZZ08400098527886e0f7030069857d2e4169ee7',
          '0x000000000000000000000000000000000000dEaD',
          `${'0x'}${'f'.repeat(400)}`,
        ),
        oddHeaderValue,
      )
      .map((value) => withHeader(base, 'x-wallet-address', value)),
  key: (base) =>
    fc
      .oneof(
        fc.constantFrom(
          'Bearer',
          'Bearer ',
          'Basic Zm9vOmJhcg==',
          `Bearer sy_${'A'.repeat(43)}`,
          `Bearer sy_${'A'.repeat(42)}`,
          'Bearer sy_',
          'bearer x',
        ),
        oddHeaderValue.map((value) => `Bearer ${value}`),
      )
      .chain((value) =>
        fc.constantFrom(withHeader(base, 'authorization', value), withHeader(base, 'x-api-key', value.replace(/^\w+ ?/, ''))),
      ),
  headers: (base) => {
    const declared = ((base.operation.spec.parameters ?? []) as Json[]).filter((p) => p.in === 'header').map((p) => p.name as string);
    const name = fc.constantFrom(
      ...declared,
      'x-request-id',
      'x-forwarded-for',
      'origin',
      'accept',
      'accept-encoding',
      'range',
      'if-none-match',
      'mcp-protocol-version',
      'payment-signature',
    );
    return fc
      .array(fc.tuple(name, oddHeaderValue), { minLength: 1, maxLength: 4 })
      .map((pairs) => pairs.reduce<MalformedRequest>((request, [n, v]) => withHeader(request, n, v), base));
  },
};

function isObjectAt(value: unknown, path: Path): boolean {
  let node = value as Json;
  for (const key of path) node = node?.[key] as Json;
  return typeof node === 'object' && node !== null && !Array.isArray(node);
}

function addedKey(value: unknown, path: Path, key: string, added: unknown): unknown {
  if (!isObjectAt(value, path)) return { [key]: added };
  const copy = structuredClone(value) as Json;
  let node = copy;
  for (const step of path) node = node[step] as Json;
  node[key] = added;
  return copy;
}

function withContentLength(base: BaseRequest): MalformedRequest {
  return base.body ? withHeader(base, 'Content-Length', String(base.body.length)) : base;
}

function targetWith(base: BaseRequest, parameter: string, value: string): string {
  const segments = base.operation.path.split('/');
  const concrete = base.target.split('?')[0].split('/');
  return segments.map((segment, i) => (segment === `{${parameter}}` ? value : concrete[i])).join('/');
}

/** Query names and values percent-encoded, but for the ones that are odd on purpose. */
function encodeQuery(text: string): string {
  return /^%|\[/.test(text) ? text : encodeURIComponent(text);
}

/** FNV-1a, so each operation draws its own cases from the one seed. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
