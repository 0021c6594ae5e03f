/**
 * A tool's outcome as an MCP `CallToolResult`. Success carries the structured result (and its
 * JSON as text, for clients that read only text); failure is `isError: true` with the same
 * OpenAI-shaped error object `/v1/tools/execute` answers, so a model or agent sees the code.
 *
 * @example
 *   toolResult({ iso: '2026-…' })          // { content: [{ type: 'text', text: '{"iso":…}' }], structuredContent: { iso: … } }
 *   toolErrorResult(toolNotFound('nope')) // { content: [{ type: 'text', text: '{"error":{…"code":"tool_not_found"…}}' }], isError: true }
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayError } from '../../errors.js';

export function toolResult(value: unknown): CallToolResult {
  const text = JSON.stringify(value) ?? 'null';
  // structuredContent must be an object; a server without structured output may answer anything.
  const structured = typeof value === 'object' && value !== null && !Array.isArray(value);
  return structured
    ? { content: [{ type: 'text', text }], structuredContent: value as Record<string, unknown> }
    : { content: [{ type: 'text', text }] };
}

export function toolErrorResult(error: GatewayError): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(error.toBody()) }], isError: true };
}
