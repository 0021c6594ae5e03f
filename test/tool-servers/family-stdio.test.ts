import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// How agents use a family server without the gateway: spawn its built stdio entry and list tools.
for (const family of ['onchain', 'web', 'knowledge', 'utility']) {
  test(`the ${family} server answers an MCP client over stdio`, async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [`dist/tool-servers/${family}/main.js`],
      env: { PATH: process.env.PATH ?? '', ...(process.env.NODE_V8_COVERAGE ? { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE } : {}) },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.ok(Array.isArray(tools));
    await client.close();
  });
}
