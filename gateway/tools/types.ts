/**
 * The tool host's contract with the rest of the gateway (the HTTP routes and the chat loop).
 * Implemented by the MCP host in this folder.
 */
import type { TraceSpan } from '../tracing/trace-span.js';

/** One tool that can run now. */
export interface ToolInfo {
  /** Public name (with the server's prefix, if config gives one). */
  name: string;
  description: string;
  /** JSON Schema of the arguments (from the MCP server's inputSchema). */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of the structured result, when the server declares one (MCP's outputSchema). */
  outputSchema?: Record<string, unknown>;
  /** Argument names, in schema order. */
  params: string[];
  /** Configured server name, or "gateway" for built-ins such as list_tools. */
  server: string;
}

export interface CallToolOptions {
  /** Aborted when the client disconnects or the chat deadline passes: the MCP call is cancelled. */
  signal?: AbortSignal;
  /** The span the call's `execute_tool` span goes under (the chat's, or the request's). */
  trace?: TraceSpan;
  /** The model's id for the call (`gen_ai.tool.call.id`), when a model made it. */
  callId?: string;
}

/**
 * Runs tools by public name. `callTool` resolves with the tool's structured result, or throws a
 * GatewayError: 404 tool_not_found, 400 invalid_tool_arguments (param names the field),
 * 404 not_found (the tool's own), 502 upstream_unavailable, 502 tool_error (the result breaks the
 * server's output schema), 503 tool_unavailable (server down, with Retry-After), 504 tool_timeout,
 * 500 tool_error.
 */
export interface ToolRunner {
  listTools(): ToolInfo[];
  callTool(name: string, args: Record<string, unknown>, options?: CallToolOptions): Promise<unknown>;
  /** Whether some configured server (or a built-in) offers `name`, even if its server is down now. */
  hasTool(name: string): boolean;
}
