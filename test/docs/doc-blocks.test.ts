/**
 * The doc-test machinery on samples: markers are read and checked, placeholders filled, and a
 * broken snippet fails — a curl the gateway refuses, a program that throws, a type error —
 * while the same snippet fixed passes, against a real gateway.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, WALLET_CHECKSUMMED, type TestGateway } from '../helpers/gateway.js';
import { blocksOf, markerProblems, parseMarker, programOf } from './doc-blocks.js';
import { runSnippet, typecheck, withPlaceholders } from './doc-runner.js';

const SAMPLE = [
  '# A page',
  '<!-- doc-test: run id=list -->',
  '```sh',
  'curl -s localhost:8080/v1/tools/execute -H "x-wallet-address: $W" -H "content-type: application/json" \\',
  `  -d '{"tool":"list_tools","args":{}}'`,
  '```',
  '',
  '```sh',
  'echo no marker',
  '```',
  '<!-- doc-test: run id=more after=list -->',
  '```ts',
  'console.log(1);',
  '```',
  '<!-- doc-test: run id=orphan after=missing -->',
  '```ts',
  'console.log(2);',
  '```',
  '<!-- doc-test: config -->',
  '```sh',
  'not json',
  '```',
  '<!-- doc-test: elsewhere test/docs/no-such.test.ts -->',
  '```ts',
  'x',
  '```',
  '<!-- doc-test: skip: a diagram of what the text says -->',
  '```json',
  '{}',
  '```',
  '```text',
  'a layout needs no marker',
  '```',
].join('\n');

let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway();
});
after(async () => {
  await gateway?.stop();
});

test('blocks are read with the marker on the line before them, and every problem with the markers is named', () => {
  const blocks = blocksOf(SAMPLE, 'page.md');
  assert.deepEqual(
    blocks.map((b) => [b.line, b.lang, b.marker?.kind]),
    [
      [3, 'sh', 'run'],
      [8, 'sh', undefined],
      [12, 'ts', 'run'],
      [16, 'ts', 'run'],
      [20, 'sh', 'config'],
      [24, 'ts', 'elsewhere'],
      [28, 'json', 'skip'],
      [31, 'text', undefined],
    ],
  );
  assert.deepEqual(markerProblems(blocks), [
    'page.md:8: a sh block without a doc-test marker',
    'page.md:20: a config block must be json',
    'page.md:24: test/docs/no-such.test.ts does not exist',
    'page.md:16: after=missing names no runnable block',
  ]);
  assert.equal(programOf(blocks, 'more').code, `${blocks[0].code}\n${blocks[2].code}`, 'after= puts the earlier block first');
});

test('a marker that says nothing useful is refused: a run without id, a skip without its reason, an unknown word', () => {
  assert.throws(() => parseMarker('run'), /needs id=/);
  assert.throws(() => parseMarker('run id=a then=b'), /needs id=/);
  assert.throws(() => parseMarker('skip'), /not a doc-test marker/);
  assert.throws(() => parseMarker('skip: later'), /not a doc-test marker/, 'a reason, not a shrug');
  assert.throws(() => parseMarker('maybe'), /not a doc-test marker/);
  assert.deepEqual(parseMarker('config at=mcpServers'), { kind: 'config', at: 'mcpServers' });
  assert.throws(() => blocksOf('<!-- doc-test: skip -->\n```sh\nx\n```\n', 'p.md'), /not a doc-test marker/);
});

test("placeholders become the test gateway's address and wallet; an unknown 0xYour… address is an error", () => {
  const context = { gatewayUrl: 'http://127.0.0.1:41234', wallet: WALLET_CHECKSUMMED };
  assert.equal(
    withPlaceholders("fetch('http://127.0.0.1:8080/v1'); curl localhost:8080/health; '0xYourWalletAddress'", context),
    `fetch('http://127.0.0.1:41234/v1'); curl 127.0.0.1:41234/health; '${WALLET_CHECKSUMMED}'`,
  );
  assert.equal(withPlaceholders('127.0.0.1:80800', context), '127.0.0.1:80800', 'only the port 8080 itself');
  assert.throws(() => withPlaceholders('"0xYourCat"', context), /unknown placeholder 0xYourCat/);
});

test('a broken sh snippet fails (the gateway refuses its request), and passes once fixed', async () => {
  const [block] = blocksOf(SAMPLE, 'page.md');
  const context = { gatewayUrl: gateway.url, wallet: WALLET_CHECKSUMMED, env: { W: WALLET_CHECKSUMMED } };
  const fixed = await runSnippet('sh', block.code, context);
  assert.equal(fixed.exitCode, 0, fixed.stderr);
  assert.match(fixed.stdout, /^\{"ok":true,"tool":"list_tools"/);

  const broken = await runSnippet('sh', block.code.replace('list_tools', 'list_toolz'), context);
  assert.equal(broken.exitCode, 22, 'curl --fail-with-body: HTTP error');
  assert.match(broken.stdout, /"code":"tool_not_found"/, 'with the error body, for the reader of the test failure');

  const later = await runSnippet('sh', 'false\necho never', context);
  assert.deepEqual([later.exitCode, later.stdout], [1, ''], 'a failing line stops the block (bash -e)');
});

test('a broken ts snippet fails at run time and at type-check time, and passes once fixed', async () => {
  const context = { gatewayUrl: gateway.url, wallet: WALLET_CHECKSUMMED };
  const program = (path: string) =>
    [
      `const res = await fetch('http://127.0.0.1:8080${path}', { headers: { 'x-wallet-address': '0xYourWalletAddress' } });`,
      'if (!res.ok) throw new Error(`HTTP ${res.status}`);',
      'const body = (await res.json()) as { data: Array<{ id: string }> };',
      'console.log(body.data.map((model) => model.id).join(" "));',
    ].join('\n');
  const fixed = await runSnippet('ts', program('/v1/models'), context);
  assert.equal(fixed.exitCode, 0, fixed.stderr);
  assert.equal(fixed.stdout, 'svc-32b-conductor svc-8b-operator\n');

  const broken = await runSnippet('ts', program('/v1/modelz'), context);
  assert.equal(broken.exitCode, 1);
  assert.match(broken.stderr, /Error: HTTP 404/);

  const report = await typecheck({ good: program('/v1/models'), bad: `${program('/v1/models')}\nconsole.log(res.tool_trace);\n` });
  assert.match(report, /^bad\.mts\(5,17\): error TS2339: Property 'tool_trace' does not exist on type 'Response'/);
  assert.doesNotMatch(report, /good\.mts/);
});
