/**
 * Runs one round of the model's tool calls: concurrently (at most `concurrency` at once), each
 * through the tool host with the chat's AbortSignal. Every outcome — a result, a failed call,
 * malformed JSON arguments, an unknown tool — becomes a `tool` message the model can read and a
 * trace entry; only a cancelled chat throws.
 *
 * @example
 *   const { messages, trace } = await runToolRound(calls, { round: 1, runner, concurrency: 4, maxChars: 16000, signal })
 */
import { echoed, GatewayError } from '../errors.js';
import type { ToolRunner } from '../tools/types.js';
import type { TraceSpan } from '../tracing/trace-span.js';
import type { ToolScope } from '../tools/tool-scope.js';
import { LIST_TOOLS_NAME, type ListToolsResult } from '../tools/list-tools-builtin.js';
import type { ToolTraceEntry, UpstreamMessage, UpstreamToolCall } from './chat-types.js';

export interface ToolRoundOptions {
  round: number;
  runner: ToolRunner;
  /** The tools the request's key may use: another is refused (tool_not_allowed) as a message the model reads. */
  scope?: ToolScope;
  concurrency: number;
  /** Longest tool message; longer results are cut with a visible marker. */
  maxChars: number;
  signal: AbortSignal;
  /** The chat's span: each call's `execute_tool` span goes under it. */
  trace?: TraceSpan;
}

export interface ToolRoundResult {
  messages: Array<Extract<UpstreamMessage, { role: 'tool' }>>;
  trace: ToolTraceEntry[];
}

export async function runToolRound(calls: UpstreamToolCall[], options: ToolRoundOptions): Promise<ToolRoundResult> {
  const messages = new Array<Extract<UpstreamMessage, { role: 'tool' }>>(calls.length);
  const trace = new Array<ToolTraceEntry>(calls.length);
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const i = next++;
      const call = calls[i];
      const outcome = await runOne(call, options);
      messages[i] = { role: 'tool', tool_call_id: call.id, content: outcome.content };
      trace[i] = outcome.trace;
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, calls.length) }, worker));
  if (options.signal.aborted) throw options.signal.reason;
  return { messages, trace };
}

async function runOne(call: UpstreamToolCall, options: ToolRoundOptions): Promise<{ content: string; trace: ToolTraceEntry }> {
  const name = call.function.name;
  const started = performance.now();
  const failed = (args: unknown, code: string, message: string) => ({
    content: JSON.stringify({ error: { code, message } }),
    trace: {
      round: options.round,
      tool: name,
      arguments: args,
      ok: false,
      duration_ms: Math.round(performance.now() - started),
      error: { code, message },
    },
  });

  const args = parseArguments(call.function.arguments);
  if (args === undefined) {
    return failed(
      call.function.arguments,
      'invalid_arguments_json',
      `The arguments for ${name} are not a JSON object: ${echoed(call.function.arguments)}`,
    );
  }
  const { scope } = options;
  if (scope && !scope.allowsName(name, options.runner.listTools())) {
    return failed(args, 'tool_not_allowed', `This API key may not use the tool ${echoed(name)}.`);
  }
  try {
    let result = await options.runner.callTool(name, args, { signal: options.signal, trace: options.trace, callId: call.id });
    // list_tools answers for every tool: a limited key's model hears only of the key's.
    if (scope && name === LIST_TOOLS_NAME) result = { tools: (result as ListToolsResult).tools.filter((tool) => scope.allows(tool)) };
    return {
      content: capped(JSON.stringify(result ?? null), options.maxChars),
      trace: { round: options.round, tool: name, arguments: args, ok: true, duration_ms: Math.round(performance.now() - started) },
    };
  } catch (err) {
    if (options.signal.aborted) throw options.signal.reason;
    if (err instanceof GatewayError) return failed(args, err.code, err.message);
    return failed(args, 'tool_error', `The tool ${name} failed.`);
  }
}

/** Arguments must be a JSON object; an empty string means no arguments. */
function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Cut a tool result to `maxChars`, saying so where the model will read it.
 *
 * @example
 *   capped('abcdef', 3) // 'abc\n[truncated: 3 of 6 characters shown]'
 */
export function capped(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[truncated: ${maxChars} of ${text.length} characters shown]`;
}
