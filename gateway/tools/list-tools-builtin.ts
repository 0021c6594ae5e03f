/**
 * `list_tools`: tool discovery answered by the gateway from its registry, since only the gateway
 * sees every server's tools. Offered in /v1/tools, runnable through /v1/tools/execute, and later
 * to the model.
 */
import { z } from 'zod';
import type { ToolInfo } from './types.js';
import { invalidToolArguments } from './tool-errors.js';
import { zodIssue } from '../errors.js';

export const LIST_TOOLS_NAME = 'list_tools';

const inputSchema = z
  .object({
    query: z.string().max(500).optional().describe('Words to look for in tool names and descriptions; omit to list every tool.'),
  })
  .strict();

const outputSchema = z.object({
  tools: z.array(z.object({ name: z.string(), description: z.string(), params: z.array(z.string()), server: z.string() })),
});

/** A zod schema as the JSON Schema a tool listing carries (without `$schema`, like the input schemas). */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return json;
}

/** How list_tools appears in listings. */
export function listToolsInfo(): ToolInfo {
  return {
    name: LIST_TOOLS_NAME,
    description:
      'List the tools available right now, with their parameters. Pass `query` to keep only tools whose name or description mentions one of its words.',
    inputSchema: jsonSchemaOf(inputSchema, 'input'),
    outputSchema: jsonSchemaOf(outputSchema, 'output'),
    params: ['query'],
    server: 'gateway',
  };
}

export type ListToolsResult = z.infer<typeof outputSchema>;

/**
 * Run list_tools over the tools that can run now. Tools matching more query words come first.
 *
 * @example
 *   runListTools({ query: 'eth balance' }, host.listTools())
 */
export function runListTools(args: Record<string, unknown>, available: ToolInfo[]): ListToolsResult {
  const parsed = inputSchema.safeParse(args);
  if (!parsed.success) {
    const { param, message } = zodIssue(parsed.error, { unknownKeyAsParam: true });
    throw invalidToolArguments(message, param);
  }
  const words = (parsed.data.query ?? '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const scored = available.map((tool) => {
    const haystack = `${tool.name.replace(/_/g, ' ')} ${tool.name} ${tool.description}`.toLowerCase();
    return { tool, score: words.filter((word) => haystack.includes(word)).length };
  });
  const matching = words.length === 0 ? scored : scored.filter((entry) => entry.score > 0);
  matching.sort((a, b) => b.score - a.score || a.tool.name.localeCompare(b.tool.name));
  return {
    tools: matching.map(({ tool }) => ({ name: tool.name, description: tool.description, params: tool.params, server: tool.server })),
  };
}
