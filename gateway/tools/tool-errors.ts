/**
 * Every way a tool call fails, as GatewayErrors: the one place where an MCP server's `isError`
 * answer and an MCP client failure become an HTTP status and an OpenAI-shaped code.
 */
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { echoed, GatewayError } from '../errors.js';

/** 404 tool_not_found: no configured server offers this name. */
export function toolNotFound(name: string): GatewayError {
  return new GatewayError({ status: 404, code: 'tool_not_found', message: `Unknown tool "${echoed(name)}".`, param: 'tool' });
}

/** 503 tool_unavailable: the tool's server is down; Retry-After says when it should be back. */
export function toolUnavailable(tool: string, server: string, retryAfterSeconds: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new GatewayError({
    status: 503,
    code: 'tool_unavailable',
    message: `Tool "${tool}" is unavailable: its server "${server}" is not running. Retry in ${seconds} s.`,
    headers: { 'Retry-After': String(seconds) },
  });
}

/** 504 tool_timeout: the call ran past the server's timeoutMs and was cancelled. */
export function toolTimeout(tool: string, timeoutMs: number): GatewayError {
  return new GatewayError({ status: 504, code: 'tool_timeout', message: `Tool "${tool}" did not answer within ${timeoutMs} ms.` });
}

/** 400 invalid_tool_arguments, naming the field at fault. */
export function invalidToolArguments(message: string, param: string | null): GatewayError {
  return new GatewayError({ status: 400, code: 'invalid_tool_arguments', message, param });
}

/**
 * 502 tool_error: the server answered with output that breaks its own outputSchema. Its fault,
 * not the caller's; what exactly is wrong goes to the log only.
 */
export function toolOutputMismatch(tool: string, details: string): GatewayError {
  return new GatewayError({
    status: 502,
    code: 'tool_error',
    message: `Tool "${tool}" failed: the tool server returned a result that does not match its output schema.`,
    details,
  });
}

/** The caller went away (client disconnect, chat deadline): nobody reads this, but logs do. */
export function toolCallCancelled(tool: string): GatewayError {
  return new GatewayError({ status: 499, code: 'request_cancelled', message: `Call to "${tool}" was cancelled by the caller.` });
}

const errorPayloadSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), param: z.string().optional() }),
});

/** A tool server's machine-readable failure code → status and public code. */
const TOOL_CODES: Record<string, { status: number; code: string }> = {
  invalid_arguments: { status: 400, code: 'invalid_tool_arguments' },
  not_found: { status: 404, code: 'not_found' },
  url_not_allowed: { status: 400, code: 'url_not_allowed' },
  upstream_unavailable: { status: 502, code: 'upstream_unavailable' },
  timeout: { status: 504, code: 'tool_timeout' },
};

/**
 * The SDK's McpServer turns its own schema checks into `isError` text: "MCP error -32602: Input
 * validation error: Invalid arguments for tool add: Invalid input: expected number, received string at a".
 * The host checks arguments first, so this is left for what it does not check (string formats).
 */
const MCP_SERVER_INPUT_ERROR = /^MCP error -32602: Input validation error: Invalid arguments for tool [^:]*: (.*)$/s;
const MCP_SERVER_OUTPUT_ERROR = /^MCP error -32602: Output validation error: /;

/** McpServer's "<problem> at <dotted.path>" (the first issue, when it lists several). */
function mcpServerInputError(problems: string): GatewayError {
  const first = /^(.*?) at ([\w.-]+)(?:, |$)/.exec(problems);
  return first ? invalidToolArguments(`${first[2]}: ${first[1]}`, first[2]) : invalidToolArguments(echoed(problems, 1000), null);
}

/**
 * Turn an `isError` tool result into a GatewayError. The kit writes `{"error":{"code","message","param"}}`
 * as the text block; McpServer's schema failures are 400 (input) or 502 (output); any other free
 * text becomes a 500 tool_error carrying that text.
 *
 * @example
 *   throw fromToolErrorResult('web_extract', result)  // 400 url_not_allowed, param "url"
 */
export function fromToolErrorResult(tool: string, result: CallToolResult): GatewayError {
  const text = result.content
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n');
  let payload: z.infer<typeof errorPayloadSchema> | undefined;
  try {
    const parsed = errorPayloadSchema.safeParse(JSON.parse(text));
    if (parsed.success) payload = parsed.data;
  } catch {
    // not JSON: a server outside our kit
  }
  if (!payload) {
    const input = MCP_SERVER_INPUT_ERROR.exec(text);
    if (input) return mcpServerInputError(input[1]);
    if (MCP_SERVER_OUTPUT_ERROR.test(text)) return toolOutputMismatch(tool, echoed(text, 1000));
    return new GatewayError({ status: 500, code: 'tool_error', message: echoed(text, 1000) || `Tool "${tool}" failed.` });
  }
  const mapped = TOOL_CODES[payload.error.code] ?? { status: 500, code: 'tool_error' };
  return new GatewayError({
    status: mapped.status,
    code: mapped.code,
    message: payload.error.message,
    param: payload.error.param ?? null,
  });
}

export interface McpFailureContext {
  tool: string;
  server: string;
  timeoutMs: number;
  /** The caller's signal had fired when the call failed. */
  cancelled: boolean;
  /** Seconds until the server should be back, for Retry-After. */
  retryAfterSeconds: number;
}

/**
 * The one converter for failures of the MCP client itself (as opposed to a tool's own `isError`
 * answer): cancellation, timeout, a closed connection, a JSON-RPC error.
 *
 * @example
 *   catch (err) { throw fromMcpFailure(err, { tool, server, timeoutMs, cancelled: signal.aborted, retryAfterSeconds: 1 }) }
 */
export function fromMcpFailure(err: unknown, context: McpFailureContext): GatewayError {
  if (err instanceof GatewayError) return err;
  if (context.cancelled) return toolCallCancelled(context.tool);
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return toolTimeout(context.tool, context.timeoutMs);
    if (err.code === ErrorCode.ConnectionClosed) return toolUnavailable(context.tool, context.server, context.retryAfterSeconds);
    // A JSON-RPC error from the server itself: it refused the arguments. (The host checks output
    // schemas itself, so the SDK client's own InvalidParams for a bad result never gets here.)
    if (err.code === ErrorCode.InvalidParams) return invalidToolArguments(stripMcpPrefix(err.message), null);
    if (err.code === ErrorCode.MethodNotFound) return toolNotFound(context.tool);
  }
  return new GatewayError({
    status: 500,
    code: 'tool_error',
    message: `Tool "${context.tool}" failed.`,
    details: err instanceof Error ? err.message : String(err),
    cause: err,
  });
}

/** McpError messages read "MCP error -32602: …"; the client wants the part after the number. */
function stripMcpPrefix(message: string): string {
  return message.replace(/^MCP error -?\d+:\s*/, '');
}
