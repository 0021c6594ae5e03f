/**
 * What a structured answer costs the gateway's CPU, in process, against a baseline in the same run:
 * `JSON.parse` of the answer (which any JSON client does anyway). Per request the gateway checks
 * the format (hash the schema, find the compiled validator) and checks the answer (parse and
 * validate); a schema seen for the first time is compiled once (ajv, patterns on RE2), which for
 * a crafted schema near the 64 KiB limit is the most one request can cost: measured against ajv's
 * default options, which the gateway does not use. Then the point of RE2: one catastrophic pattern
 * (`^(a+)+$`) on a long answer against V8's own engine on a short one.
 *
 *   npx tsx bench/structured-output.ts        (about 20 s)
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { zodResponseFormat } from 'openai/helpers/zod';
import { AnswerFormats } from '../gateway/chat/answer-format.js';
import { checkAnswer } from '../gateway/chat/structured-answer.js';

/** A schema as an SDK sends it: a few nested objects, an array, enums, a pattern. */
const Order = z.object({
  id: z.string().regex(/^ord_[a-z0-9]{8}$/),
  customer: z.object({ name: z.string(), email: z.string(), tier: z.enum(['free', 'pro', 'team']) }),
  items: z.array(z.object({ sku: z.string(), quantity: z.number().int().min(1), price: z.number() })).max(50),
  total: z.number(),
  notes: z.string().nullable(),
});
const schema = zodResponseFormat(Order, 'order').json_schema.schema as Record<string, unknown>;
const answer = JSON.stringify({
  id: 'ord_ab12cd34',
  customer: { name: 'Ada', email: 'ada@example.com', tier: 'pro' },
  items: Array.from({ length: 10 }, (_, i) => ({ sku: `sku-${i}`, quantity: i + 1, price: 9.99 })),
  total: 549.45,
  notes: null,
});

/** CPU microseconds per call of `work`, over `ms` of wall time, median of 5 windows. */
function cpuPerCall(work: () => void, ms = 600): number {
  const windows: number[] = [];
  for (let w = 0; w < 5; w++) {
    const start = process.cpuUsage();
    const until = performance.now() + ms;
    let calls = 0;
    while (performance.now() < until) {
      for (let i = 0; i < 100; i++) work();
      calls += 100;
    }
    const used = process.cpuUsage(start);
    windows.push((used.user + used.system) / calls);
  }
  return windows.sort((a, b) => a - b)[2];
}

const row = (name: string, us: number, baseline: number) =>
  console.log(`${name.padEnd(52)} ${us.toFixed(2).padStart(9)} µs  ${(us / baseline).toFixed(2).padStart(6)}×`);

const formats = new AnswerFormats();
const format = formats.compile({ type: 'json_schema', name: 'order', schema, strict: true }, 'response_format');

const baseline = cpuPerCall(() => JSON.parse(answer));
console.log(`answer: ${answer.length} characters; schema: ${JSON.stringify(schema).length} characters of JSON\n`);
console.log(`${'per request'.padEnd(52)} ${'CPU'.padStart(12)}  vs JSON.parse`);
row('JSON.parse of the answer (baseline)', baseline, baseline);
row(
  'format check, cached (hash + LRU)',
  cpuPerCall(() => formats.compile({ type: 'json_schema', name: 'order', schema }, 'response_format')),
  baseline,
);
row(
  'answer check (parse + validate, a pattern on RE2)',
  cpuPerCall(() => checkAnswer(format, answer)),
  baseline,
);
let n = 0;
row(
  'first sight of a schema (compile, then cached)',
  cpuPerCall(
    () => new AnswerFormats().compile({ type: 'json_schema', name: 'o', schema: { ...schema, title: `t${n++}` } }, 'response_format'),
    1500,
  ),
  baseline,
);

/** Near 64 KiB: 2,000 properties, each a $ref to one object schema (ajv inlines each by default). */
const crafted = (salt: string) => ({
  $defs: { d: { type: 'object', properties: { a: { type: 'string' } } } },
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`${i}${salt}`, { $ref: '#/$defs/d' }])),
});
console.log(`\na crafted schema of ${JSON.stringify(crafted('0')).length} bytes, compiled once (median of 3):`);
let crafts = 0;
const compileMs = (compile: (schema: Record<string, unknown>) => void) => {
  const runs = [0, 1, 2].map((i) => {
    const start = process.cpuUsage();
    compile(crafted(String.fromCharCode(97 + crafts++ * 3 + i)));
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  });
  return runs.sort((a, b) => a - b)[1];
};
const gatewayMs = compileMs((s) => formats.compile({ type: 'json_schema', name: 'c', schema: s }, 'response_format'));
const defaults = new Ajv2020({ strict: false });
const defaultMs = compileMs((s) => {
  defaults.compile(s);
  defaults.removeSchema(s);
});
console.log(
  `  the gateway's options: ${gatewayMs.toFixed(1)} ms; ajv's defaults: ${defaultMs.toFixed(1)} ms (${(gatewayMs / defaultMs).toFixed(2)}×)`,
);

console.log('\na catastrophic pattern, ^(a+)+$, on a non-matching text:');
const evil = formats.compile({ type: 'json_schema', name: 'e', schema: { type: 'string', pattern: '^(a+)+$' } }, 'response_format');
for (const length of [1_000, 100_000]) {
  const text = JSON.stringify(`${'a'.repeat(length)}!`);
  const start = process.cpuUsage();
  checkAnswer(evil, text);
  const used = process.cpuUsage(start);
  console.log(`  RE2 (the gateway), ${String(length).padStart(7)} characters: ${((used.user + used.system) / 1000).toFixed(2)} ms`);
}
const v8 = new RegExp('^(a+)+$', 'u');
v8.test('aaaaaaaaaa!'); // compiled before it is timed
for (const length of [22, 24, 26]) {
  const start = process.cpuUsage();
  v8.test(`${'a'.repeat(length)}!`);
  const used = process.cpuUsage(start);
  console.log(
    `  V8's RegExp,        ${String(length).padStart(7)} characters: ${((used.user + used.system) / 1000).toFixed(2)} ms (doubles with each one more)`,
  );
}
