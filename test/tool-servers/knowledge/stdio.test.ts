import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// The built server as an agent or the gateway runs it: KNOWLEDGE_DIR from the environment, logs on stderr.
let dir: string;
let client: Client;
let stderr = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-knowledge-stdio-'));
  copyFileSync(join(process.cwd(), 'config/knowledge/lido.md'), join(dir, 'lido.md'));
  writeFileSync(join(dir, 'half-written.md'), '---\nname: Half\n---\n## Overview\nText.\n');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['dist/tool-servers/knowledge/main.js'],
    env: {
      PATH: process.env.PATH ?? '',
      KNOWLEDGE_DIR: dir,
      ...(process.env.NODE_V8_COVERAGE ? { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE } : {}),
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  client = new Client({ name: 'knowledge-stdio-test', version: '1.0.0' });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the spawned server reads KNOWLEDGE_DIR, names the malformed file on stderr and serves the rest', async () => {
  const result = await client.callTool({ name: 'knowledge_search', arguments: { query: 'wstETH', limit: 1 } });
  const { results } = result.structuredContent as { results: Array<{ project: string }> };
  assert.equal(results[0].project, 'Lido');
  const skipped = stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((line) => line.file === 'half-written.md');
  assert.deepEqual(
    [skipped?.msg, skipped?.reason],
    ['skipping malformed knowledge file half-written.md', 'front matter category: Invalid input: expected string, received undefined'],
  );
});
