import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { sendJson, startFixture } from '../fixtures/web/fixture-server.js';

/**
 * The files README's "Writing your own tool server" shows: each ```ts block there whose first line
 * is `// tool-servers/<path>`.
 */
function templateFiles(): Map<string, string> {
  const readme = readFileSync('docs/tool-servers.md', 'utf8');
  const start = readme.indexOf('### Writing your own tool server');
  const section = readme.slice(start, readme.indexOf('\n## ', start));
  const files = new Map<string, string>();
  for (const [, path, body] of section.matchAll(/```ts\n\/\/ (tool-servers\/[\w/.-]+\.ts)\n([\s\S]*?)```/g)) files.set(path, body);
  return files;
}

test("README's tool-server template runs as written: lists its tool, answers, and fails the kit's way", async (t) => {
  const files = templateFiles();
  const expected = ['tool-servers/fx/main.ts', 'tool-servers/fx/server.ts', 'tool-servers/fx/tools/get-fx-rate.ts'];
  assert.deepEqual([...files.keys()].sort(), expected);

  // The files in a scratch tree beside links to the real kit and packages, as they would sit in this repository (ESM).
  const scratch = mkdtempSync(join(tmpdir(), 'switchyard-template-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  for (const [path, body] of files) {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), body);
  }
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(resolve('tool-servers/kit'), join(scratch, 'tool-servers/kit'));
  symlinkSync(resolve('node_modules'), join(scratch, 'node_modules'));

  const rates: Record<string, number> = { EUR: 0.9215 };
  const frankfurter = await startFixture((request, response) => {
    const quote = request.query.get('symbols') ?? '';
    if (request.path !== '/v1/latest' || quote === 'XXX') return sendJson(response, 404, { message: 'not found' });
    const known = quote in rates ? { [quote]: rates[quote] } : {};
    sendJson(response, 200, { amount: 1, base: request.query.get('base'), date: '2026-11-20', rates: known });
  });
  t.after(() => frankfurter.close());

  const client = new Client({ name: 'template-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', join(scratch, 'tool-servers/fx/main.ts')],
      env: {
        PATH: process.env.PATH ?? '',
        FX_BASE_URL: `${frankfurter.url}/`,
        LOG_LEVEL: 'warn',
        ...(process.env.NODE_V8_COVERAGE ? { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE } : {}),
      },
      stderr: 'pipe',
    }),
  );
  t.after(() => client.close());

  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => [tool.name, tool.inputSchema.required]),
    [['get_fx_rate', ['base', 'quote']]],
  );

  const ok = await client.callTool({ name: 'get_fx_rate', arguments: { base: 'USD', quote: 'EUR' } });
  assert.deepEqual(ok.structuredContent, { base: 'USD', quote: 'EUR', rate: 0.9215, date: '2026-11-20' });
  assert.equal(frankfurter.requests.at(-1)?.path, '/v1/latest');
  assert.equal(frankfurter.requests.at(-1)?.query.toString(), 'base=USD&symbols=EUR');

  const failure = async (args: Record<string, string>) => {
    const result = await client.callTool({ name: 'get_fx_rate', arguments: args });
    assert.equal(result.isError, true);
    return JSON.parse((result.content as Array<{ text: string }>)[0].text) as { error: { code: string; message: string; param?: string } };
  };
  assert.deepEqual(await failure({ base: 'usd', quote: 'EUR' }), {
    error: { code: 'invalid_arguments', message: 'base: must be a currency code such as "USD"', param: 'base' },
  });
  const unknownQuote = { error: { code: 'not_found', message: 'No rate from USD to JPY.', param: 'quote' } };
  assert.deepEqual(await failure({ base: 'USD', quote: 'JPY' }), unknownQuote);
  const providerSaid404 = { error: { code: 'upstream_unavailable', message: 'Frankfurter: HTTP 404' } };
  assert.deepEqual(await failure({ base: 'USD', quote: 'XXX' }), providerSaid404);
});
