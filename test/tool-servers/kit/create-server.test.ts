import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { createServer, defineTool, ToolError } from '../../../tool-servers/kit/index.js';

const tools = [
  defineTool({
    name: 'add',
    description: 'Add two numbers.',
    input: z.object({ a: z.number(), b: z.number().describe('second') }),
    output: z.object({ sum: z.number() }),
    run: async ({ a, b }) => ({ sum: a + b }),
  }),
  defineTool({
    name: 'lookup',
    description: 'Fails with not_found.',
    input: z.object({ id: z.string() }),
    output: z.object({}),
    run: async ({ id }) => {
      throw new ToolError('not_found', `No item ${id}.`);
    },
  }),
  defineTool({
    name: 'bad_output',
    description: 'Returns something its output schema refuses.',
    input: z.object({}),
    output: z.object({ n: z.number() }),
    run: async () => ({ n: 'not a number' }) as unknown as { n: number },
  }),
  defineTool({
    name: 'throws',
    description: 'Throws a plain error.',
    input: z.object({}),
    output: z.object({}),
    run: async () => {
      throw new Error('internal detail');
    },
  }),
];

let client: Client;

before(async () => {
  const server = createServer({ name: 'kit-test', version: '1.0.0', tools });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'kit-test-client', version: '1.0.0' });
  await client.connect(clientSide);
});

after(async () => {
  await client.close();
});

function errorOf(result: CallToolResult) {
  assert.equal(result.isError, true);
  return JSON.parse((result.content[0] as { text: string }).text) as { error: { code: string; message: string; param?: string } };
}

test('lists tools with JSON Schemas for input and output', async () => {
  const { tools: listed } = await client.listTools();
  assert.deepEqual(
    listed.map((t) => t.name),
    ['add', 'lookup', 'bad_output', 'throws'],
  );
  const add = listed[0];
  assert.deepEqual(add.inputSchema.required, ['a', 'b']);
  assert.deepEqual(Object.keys(add.inputSchema.properties ?? {}), ['a', 'b']);
  assert.equal(add.outputSchema?.type, 'object');
  assert.equal(add.annotations?.readOnlyHint, true);
});

test('success: structuredContent plus the same JSON as text', async () => {
  const result = (await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as CallToolResult;
  assert.deepEqual(result.structuredContent, { sum: 5 });
  assert.deepEqual(result.content, [{ type: 'text', text: '{"sum":5}' }]);
});

test('invalid arguments → invalid_arguments naming the field', async () => {
  const result = (await client.callTool({ name: 'add', arguments: { a: 2, b: 'x' } })) as CallToolResult;
  assert.deepEqual(errorOf(result), {
    error: { code: 'invalid_arguments', message: 'b: Invalid input: expected number, received string', param: 'b' },
  });
});

test("a tool's ToolError becomes an isError result with its code", async () => {
  const result = (await client.callTool({ name: 'lookup', arguments: { id: '7' } })) as CallToolResult;
  assert.deepEqual(errorOf(result), { error: { code: 'not_found', message: 'No item 7.' } });
});

test('an output that fails its schema is internal_error, not a bad result', async () => {
  const result = (await client.callTool({ name: 'bad_output', arguments: {} })) as CallToolResult;
  const { error } = errorOf(result);
  assert.equal(error.code, 'internal_error');
  assert.match(error.message, /^Tool produced an invalid result: /);
});

test('an unexpected throw is internal_error without its detail', async () => {
  const result = (await client.callTool({ name: 'throws', arguments: {} })) as CallToolResult;
  assert.deepEqual(errorOf(result), { error: { code: 'internal_error', message: 'The tool failed unexpectedly.' } });
});

test('an unknown tool is not_found', async () => {
  const result = (await client.callTool({ name: 'nope', arguments: {} })) as CallToolResult;
  assert.deepEqual(errorOf(result), { error: { code: 'not_found', message: 'Unknown tool "nope".' } });
});

test('two tools with one name are refused at creation', () => {
  assert.throws(() => createServer({ name: 'twice', version: '1', tools: [tools[0], tools[0]] }), {
    message: 'tool "add" is defined twice in twice',
  });
});
