import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MCP_TOOL_NAME_MAX, McpToolListing } from '../../../../gateway/http/mcp/mcp-tool-listing.js';
import { toolErrorResult, toolResult } from '../../../../gateway/http/mcp/mcp-tool-results.js';
import { toolNotFound } from '../../../../gateway/tools/tool-errors.js';
import type { ToolInfo, ToolRunner } from '../../../../gateway/tools/types.js';
import { capturingLogger } from '../../tools/fixture-servers.js';

const info = (name: string, outputSchema?: Record<string, unknown>): ToolInfo => ({
  name,
  description: `about ${name}`,
  inputSchema: { properties: { a: { type: 'string' } } },
  ...(outputSchema ? { outputSchema } : {}),
  params: ['a'],
  server: 's',
});

/** A runner whose tool list the test swaps, as a restart or list_changed does. */
function runnerWith(initial: ToolInfo[]): { runner: ToolRunner; set(infos: ToolInfo[]): void } {
  let infos = initial;
  return {
    runner: {
      listTools: () => infos,
      hasTool: (name) => infos.some((tool) => tool.name === name),
      callTool: async () => ({}),
    },
    set: (next) => (infos = next),
  };
}

test('names over 64 characters are left out, warned once each, at start and when a new list brings one', () => {
  const atLimit = 'a'.repeat(MCP_TOOL_NAME_MAX);
  const tooLong = 'b'.repeat(MCP_TOOL_NAME_MAX + 1);
  const tools = runnerWith([info('short'), info(atLimit), info(tooLong)]);
  const { logger, lines } = capturingLogger();
  const listing = new McpToolListing(tools.runner, logger);
  const warnings = () => lines.filter((line) => line.level === 40).map((line) => line.tool);
  assert.deepEqual(warnings(), [tooLong], 'warned at construction, before any request');
  assert.deepEqual(
    listing.tools().map((tool) => tool.name),
    ['short', atLimit],
  );
  assert.deepEqual(
    ['short', atLimit, tooLong, 'nope'].map((name) => listing.offers(name)),
    [true, true, false, false],
  );

  const later = 'c'.repeat(70);
  tools.set([info('short'), info(tooLong), info(later)]);
  assert.deepEqual(
    listing.tools().map((tool) => tool.name),
    ['short'],
  );
  assert.deepEqual(warnings(), [tooLong, later]);
});

test('MCP records: object schemas, the output schema only when declared; cached until the list changes', () => {
  const tools = runnerWith([info('plain'), info('typed', { type: 'object', properties: { x: { type: 'number' } } })]);
  const listing = new McpToolListing(tools.runner, capturingLogger().logger);
  const listed = listing.tools();
  assert.deepEqual(listed[0], {
    name: 'plain',
    description: 'about plain',
    inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
  });
  assert.deepEqual(listed[1].outputSchema, { type: 'object', properties: { x: { type: 'number' } } });
  assert.equal(listing.tools(), listed, 'same list, same records');
  tools.set([info('plain')]);
  assert.notEqual(listing.tools(), listed);
});

test('results: objects are structuredContent too; other values only text; failures carry the error body', () => {
  assert.deepEqual(toolResult({ a: 1 }), { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } });
  assert.deepEqual(toolResult([1, 2]), { content: [{ type: 'text', text: '[1,2]' }] });
  assert.deepEqual(toolResult(null), { content: [{ type: 'text', text: 'null' }] });
  assert.deepEqual(toolErrorResult(toolNotFound('x')), {
    content: [
      {
        type: 'text',
        text: '{"error":{"message":"Unknown tool \\"x\\".","type":"not_found_error","code":"tool_not_found","param":"tool"}}',
      },
    ],
    isError: true,
  });
});
