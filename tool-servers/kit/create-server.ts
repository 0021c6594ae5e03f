import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AnyToolDefinition } from './define-tool.js';
import { ToolError, type ToolErrorPayload } from './tool-error.js';
import type { Logger } from './logger.js';
import { traceToolCall } from './tracing.js';

export interface CreateServerOptions {
  name: string;
  version: string;
  tools: AnyToolDefinition[];
  logger?: Logger;
}

/**
 * Build an MCP server offering `tools`. We use the SDK's low-level `Server` rather than
 * `McpServer` so argument validation answers with our own machine-readable `invalid_arguments`
 * code and the field at fault, which the gateway turns into a 400 naming that field.
 *
 * Success: `structuredContent` (validated against the output schema) plus the same JSON as text.
 * Failure: `isError: true` with `{"error":{"code","message","param"}}` as the text block.
 */
export function createServer(options: CreateServerOptions): Server {
  const byName = new Map<string, AnyToolDefinition>();
  for (const tool of options.tools) {
    if (byName.has(tool.name)) throw new Error(`tool "${tool.name}" is defined twice in ${options.name}`);
    byName.set(tool.name, tool);
  }
  const listing = options.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: jsonSchema(tool.input, 'input'),
    outputSchema: jsonSchema(tool.output, 'output'),
    annotations: { readOnlyHint: true, openWorldHint: true },
  }));

  const server = new Server({ name: options.name, version: options.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    traceToolCall(
      { tool: request.params.name, requestId: extra.requestId, meta: request.params._meta, args: request.params.arguments },
      () => callTool(request.params.name, request.params.arguments ?? {}, extra.signal),
      failureOf,
    ),
  );
  return server;

  async function callTool(name: string, rawArgs: unknown, signal: AbortSignal): Promise<CallToolResult> {
    const tool = byName.get(name);
    if (!tool) return errorResult(new ToolError('not_found', `Unknown tool "${name}".`));
    const started = Date.now();
    try {
      const args = parseArguments(tool, rawArgs);
      const output = tool.output.parse(await tool.run(args, { signal }));
      options.logger?.debug({ tool: tool.name, ms: Date.now() - started }, 'tool ok');
      return { structuredContent: output as Record<string, unknown>, content: [{ type: 'text', text: JSON.stringify(output) }] };
    } catch (err) {
      const toolError = asToolError(err, signal);
      const level = toolError.code === 'internal_error' ? 'error' : 'info';
      options.logger?.[level](
        { tool: tool.name, code: toolError.code, ms: Date.now() - started, err: level === 'error' ? err : undefined },
        'tool failed',
      );
      return errorResult(toolError);
    }
  }
}

/** An isError result's code (what its span's status says), undefined for a success. */
function failureOf(result: CallToolResult): string | undefined {
  if (!result.isError) return undefined;
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  try {
    return (JSON.parse(text) as ToolErrorPayload).error.code;
  } catch {
    return 'tool_error';
  }
}

function parseArguments(tool: AnyToolDefinition, raw: unknown): unknown {
  const parsed = tool.input.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue.path.map(String).join('.') || undefined;
  throw new ToolError('invalid_arguments', param ? `${param}: ${issue.message}` : issue.message, { param });
}

function asToolError(err: unknown, signal: AbortSignal): ToolError {
  if (err instanceof ToolError) return err;
  if (signal.aborted) return new ToolError('timeout', 'The call was cancelled.');
  if (err instanceof z.ZodError) {
    // Our own output failed its schema: a bug in this server, not the caller's fault.
    return new ToolError('internal_error', `Tool produced an invalid result: ${err.issues[0]?.message ?? 'unknown'}`);
  }
  return new ToolError('internal_error', 'The tool failed unexpectedly.', { cause: err });
}

function errorResult(err: ToolError): CallToolResult {
  const payload: ToolErrorPayload = { error: { code: err.code, message: err.message, ...(err.param ? { param: err.param } : {}) } };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(payload) }] };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [key: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...rest, type: 'object' };
}
