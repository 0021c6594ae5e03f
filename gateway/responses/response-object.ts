/**
 * The Responses API's response object, as `POST /v1/responses` answers, its streaming lifecycle
 * events carry, and `GET /v1/responses/{id}` returns: the request's settings echoed, the output
 * items, and usage in input/output tokens.
 * Shape: https://platform.openai.com/docs/api-reference/responses/object (`Response` in the
 * `openai` client's types).
 *
 * @example
 *   responseObject({ id, createdAt, model: 'svc-32b-conductor', request, status: 'completed', output: items, usage })
 */
import type { Usage } from '../chat/chat-types.js';
import type { OutputItem } from './response-output.js';
import type { ResponsesRequest } from './response-request.js';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseState {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** Canonical model id. */
  model: string;
  request: ResponsesRequest;
  status: ResponseStatus;
  output: OutputItem[];
  usage?: Usage;
  /** A failed response's error (`server_error`, or `rate_limit_exceeded` for a 429). */
  error?: { code: string; message: string };
  /** Why an incomplete response stopped: the token cap, or the wallet's credits. */
  incompleteReason?: 'max_output_tokens' | 'insufficient_credits';
}

export function responseObject(state: ResponseState): Record<string, unknown> {
  const { request } = state;
  return {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: state.status === 'incomplete' ? { reason: state.incompleteReason ?? 'max_output_tokens' } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.maxOutputTokens ?? null,
    model: state.model,
    output: state.output,
    parallel_tool_calls: request.parallelToolCalls,
    previous_response_id: request.previousResponseId ?? null,
    temperature: request.sampling.temperature ?? null,
    top_p: request.sampling.top_p ?? null,
    tool_choice: request.toolChoice,
    tools: request.tools,
    metadata: request.metadata,
    store: request.store,
    text: { format: request.textFormat },
    truncation: 'disabled',
    usage: state.usage ? responseUsage(state.usage) : null,
    ...(request.sampling.user !== undefined ? { user: request.sampling.user } : {}),
  };
}

function responseUsage(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}
