import type { UpstreamMessage } from './chat-types.js';

/** A tool message whose call no assistant message made, or a call no tool message answers. */
export interface UnpairedTool {
  kind: 'result_without_call' | 'call_without_result';
  /** The call id. */
  id: string;
  /** The message: the tool message, or the assistant message that made the call. */
  index: number;
}

/**
 * The first tool result without its call or tool call without its result in a conversation, if
 * any. The model must see every call with its result: shown one without the other, an upstream
 * refuses the request (OpenAI answers 400) or guesses. Order is not judged beyond "the call comes
 * first", since OpenAI-compatible servers differ on it.
 *
 * @example
 * unpairedTool([{ role: 'tool', tool_call_id: 'call_1', content: '42' }])
 * // { kind: 'result_without_call', id: 'call_1', index: 0 }
 */
export function unpairedTool(messages: readonly UpstreamMessage[]): UnpairedTool | undefined {
  const madeAt = new Map<string, number>();
  const answered = new Set<string>();
  for (let index = 0; index < messages.length; index++) {
    const m = messages[index];
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) madeAt.set(call.id, index);
    else if (m.role === 'tool') {
      if (!madeAt.has(m.tool_call_id)) return { kind: 'result_without_call', id: m.tool_call_id, index };
      answered.add(m.tool_call_id);
    }
  }
  for (const [id, index] of madeAt) if (!answered.has(id)) return { kind: 'call_without_result', id, index };
  return undefined;
}
