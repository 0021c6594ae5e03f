/**
 * Shapes shared by the chat loop, the upstream client and the HTTP route: messages as sent to the
 * upstream, the function tools offered, usage, and the tool trace returned to clients.
 */

export interface UpstreamToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type UpstreamMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: UpstreamToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

/** A tool as offered to the model, in the OpenAI function-calling format. */
export interface FunctionTool {
  type: 'function';
  /** Always set on the gateway's tools; a client's function may leave them out. */
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One tool call of a chat, as reported in `tool_trace`. */
export interface ToolTraceEntry {
  /** 1-based tool round. */
  round: number;
  tool: string;
  /** Parsed arguments, or the raw text when the model wrote malformed JSON. */
  arguments: unknown;
  ok: boolean;
  duration_ms: number;
  error?: { code: string; message: string };
}

/** Credits of a finished chat when credits are on. */
export interface ChatCredits {
  charged: number;
  remaining: number;
}

/** `tool_calls`: the answer hands the client calls of its own functions. */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';
