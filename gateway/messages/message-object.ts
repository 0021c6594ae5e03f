/**
 * The Message object a `POST /v1/messages` answers with (and a stream's `message_start` carries,
 * empty): `id` `msg_…`, the canonical model id, the content blocks, `stop_reason` and `usage`.
 * `stop_reason`: `end_turn` for a finished answer, `max_tokens` when the output cap or the
 * wallet's credits cut it (chat completions say `length` for both), `tool_use` when it hands the
 * client calls of its tools. `stop_sequence` is always null: OpenAI-compatible upstreams do not
 * say which stop string matched. Usage is the sum over every upstream call of the request.
 * Shape: https://docs.claude.com/en/api/messages (the response), `Message` in `@anthropic-ai/sdk`.
 *
 * @example
 *   messageObject({ id, model: 'svc-32b-conductor', content: [], stopReason: stopReasonOf('stop'), usage })
 */
import type { FinishReason, Usage } from '../chat/chat-types.js';
import type { ContentBlock } from './message-output.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

export function stopReasonOf(finishReason: FinishReason): StopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case 'stop':
      return 'end_turn';
  }
}

/** The format's usage: no prompt caching here, so both cache counts are 0. */
function messageUsage(inputTokens: number, outputTokens: number): Record<string, number> {
  return { input_tokens: inputTokens, output_tokens: outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

export function messageObject(m: {
  id: string;
  model: string;
  content: ContentBlock[];
  stopReason: StopReason | null;
  usage: Usage | { prompt_tokens: number; completion_tokens: number };
}): Record<string, unknown> {
  return {
    id: m.id,
    type: 'message',
    role: 'assistant',
    model: m.model,
    content: m.content,
    stop_reason: m.stopReason,
    stop_sequence: null,
    usage: messageUsage(m.usage.prompt_tokens, m.usage.completion_tokens),
  };
}
