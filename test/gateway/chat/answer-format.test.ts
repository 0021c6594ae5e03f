/**
 * Answer formats as untrusted input (chat/answer-format.ts): the size and depth limits at their
 * edges, both dialects, local references only, patterns compiled by RE2 (a catastrophic one
 * validates in linear time, a lookahead is refused), formats not validated, and the cache by hash.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AnswerFormats,
  MAX_SCHEMA_BYTES,
  MAX_SCHEMA_DEPTH,
  upstreamResponseFormat,
  type AnswerFormat,
} from '../../../gateway/chat/answer-format.js';
import { GatewayError } from '../../../gateway/errors.js';

const formats = new AnswerFormats();
const compile = (schema: Record<string, unknown>, param = 'response_format') =>
  formats.compile({ type: 'json_schema', name: 'answer', schema }, param);

function refusal(work: () => unknown): { status: number; code: string; param: string | null; message: string } {
  try {
    work();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return { status: err.status, code: err.code, param: err.param, message: err.message };
  }
  assert.fail('expected a refusal');
}

function validator(format: AnswerFormat): (value: unknown) => string | undefined {
  assert.equal(format.type, 'json_schema');
  return format.validate;
}

/** `inner` under `times` levels of object properties (each adds two JSON levels: the schema and its `properties`). */
function underProperties(times: number, inner: Record<string, unknown>): Record<string, unknown> {
  let schema = inner;
  for (let i = 0; i < times; i++) schema = { type: 'object', properties: { a: schema }, required: ['a'] };
  return schema;
}

function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(jsonDepth));
}

test('a schema of 64 KiB is accepted; one byte more is 400 naming the field of each API', () => {
  const padded = (bytes: number) => {
    const schema = { type: 'object', description: '' };
    schema.description = 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify(schema)));
    return schema;
  };
  assert.equal(Buffer.byteLength(JSON.stringify(padded(MAX_SCHEMA_BYTES))), 65_536);
  assert.equal(compile(padded(MAX_SCHEMA_BYTES)).type, 'json_schema');
  assert.deepEqual(
    refusal(() => compile(padded(MAX_SCHEMA_BYTES + 1))),
    {
      status: 400,
      code: 'invalid_request',
      param: 'response_format.json_schema.schema',
      message: 'response_format.json_schema.schema: the schema is 65537 bytes of JSON; at most 65536 are accepted.',
    },
  );
  assert.equal(refusal(() => compile(padded(65 * 1024), 'text.format')).param, 'text.format.schema');
});

test('a schema 32 levels deep is accepted; 33 is 400', () => {
  const ok = underProperties(15, { type: 'string', enum: ['x'] });
  const deep = underProperties(16, { type: 'string' });
  assert.equal(jsonDepth(ok), 32);
  assert.equal(jsonDepth(deep), 33);
  let value: unknown = 'x';
  for (let i = 0; i < 15; i++) value = { a: value };
  assert.equal(validator(compile(ok))(value), undefined);
  assert.deepEqual(
    refusal(() => compile(deep)),
    {
      status: 400,
      code: 'invalid_request',
      param: 'response_format.json_schema.schema',
      message: 'response_format.json_schema.schema: the schema nests deeper than 32 levels of objects and arrays.',
    },
  );
});

test('draft-07 and 2020-12 are read by their $schema; another dialect does not compile', () => {
  // `items` as an array is draft-07's tuple form; 2020-12 calls it prefixItems.
  const draft07 = validator(
    compile({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }], additionalItems: false }),
  );
  assert.equal(draft07(['a']), undefined);
  assert.equal(draft07(['a', 'b']), 'the value must NOT have more than 1 items');
  const draft2020 = validator(
    compile({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }], items: false }),
  );
  assert.equal(draft2020(['a']), undefined);
  assert.match(draft2020(['a', 1]) ?? '', /must NOT have more than 1 items/);
  const draft04 = refusal(() => compile({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }));
  assert.equal(draft04.param, 'response_format.json_schema.schema');
  assert.match(draft04.message, /the schema does not compile: no schema with key or ref "http:\/\/json-schema.org\/draft-04\/schema#"/);
});

test('only references within the schema are followed', () => {
  const local = validator(compile({ $defs: { n: { type: 'integer' } }, type: 'object', properties: { n: { $ref: '#/$defs/n' } } }));
  assert.equal(local({ n: 1 }), undefined);
  assert.equal(local({ n: 'x' }), '/n must be integer');
  for (const ref of ['https://example.com/schema.json', 'other.json#/x', '//evil/x']) {
    assert.deepEqual(
      refusal(() => compile({ type: 'object', properties: { a: { $ref: ref } } })),
      {
        status: 400,
        code: 'invalid_request',
        param: 'response_format.json_schema.schema',
        message: `response_format.json_schema.schema: $ref "${ref}" points outside the schema: only references within it (#…) are followed.`,
      },
    );
  }
});

test('formats are not validated', () => {
  const validate = validator(compile({ type: 'string', format: 'email' }));
  assert.equal(validate('not an email'), undefined);
});

test('a catastrophic pattern validates in linear time (RE2); a lookahead is refused', () => {
  const validate = validator(compile({ type: 'string', pattern: '^(a+)+$' }));
  // V8's backtracking engine takes seconds on 30 characters of this, and doubles with each one more.
  const started = process.cpuUsage();
  assert.equal(validate(`${'a'.repeat(100_000)}!`), 'the value must match pattern "^(a+)+$"');
  const cpuMs = (process.cpuUsage(started).user + process.cpuUsage(started).system) / 1000;
  assert.ok(cpuMs < 1_000, `one validation of 100,000 characters took ${cpuMs} ms of CPU`);
  assert.equal(validate('aaaa'), undefined);
  const properties = validator(compile({ type: 'object', patternProperties: { '^(x+x+)+y$': { type: 'integer' } } }));
  assert.equal(properties({ [`${'x'.repeat(50_000)}y`]: 'no' }), `/${'x'.repeat(50_000)}y must be integer`);
  const lookahead = refusal(() => compile({ type: 'string', pattern: '^(?=a)b' }));
  assert.equal(lookahead.param, 'response_format.json_schema.schema');
  assert.match(lookahead.message, /the schema does not compile: .*invalid perl operator: \(\?=/);
  assert.match(refusal(() => compile({ type: 'string', pattern: '(a)\\1' })).message, /the schema does not compile/);
});

test('compiled once per schema: the same schema sent again is the cached validator, a refusal too', () => {
  const fresh = new AnswerFormats();
  const schema = { type: 'object', properties: { a: { type: 'string' } } };
  const first = validator(fresh.compile({ type: 'json_schema', name: 'a', schema }, 'response_format'));
  const second = validator(fresh.compile({ type: 'json_schema', name: 'b', schema: structuredClone(schema) }, 'text.format'));
  assert.equal(first({ a: 1 }), second({ a: 1 }));
  const compiled = (fresh as unknown as { compiled: Map<string, unknown> }).compiled;
  assert.equal(compiled.size, 1, 'one entry for two requests with equal schemas');
  refusal(() => fresh.compile({ type: 'json_schema', name: 'c', schema: { pattern: '(?=x)', type: 'string' } }, 'response_format'));
  refusal(() => fresh.compile({ type: 'json_schema', name: 'c', schema: { pattern: '(?=x)', type: 'string' } }, 'response_format'));
  assert.equal(compiled.size, 2);
});

test('what the answering call carries upstream: the chat-completions response_format', () => {
  assert.equal(upstreamResponseFormat(formats.compile({ type: 'text' }, 'response_format')), undefined);
  assert.deepEqual(upstreamResponseFormat(formats.compile({ type: 'json_object' }, 'response_format')), { type: 'json_object' });
  const schema = { type: 'object', properties: { a: { type: 'string' } } };
  assert.deepEqual(
    upstreamResponseFormat(formats.compile({ type: 'json_schema', name: 'a', description: 'An a.', schema, strict: true }, 'text.format')),
    { type: 'json_schema', json_schema: { name: 'a', description: 'An a.', schema, strict: true } },
  );
});
