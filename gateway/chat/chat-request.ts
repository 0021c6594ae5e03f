/**
 * The chat-completions request body, validated with zod. Accepts what OpenAI clients send and
 * ignores fields it does not know; refuses what the gateway cannot honour (legacy `functions`,
 * several choices, a tool result without its call or a call without its result) with a 400 that
 * names the field. The client's own `tools` (type `function`)
 * come out as `clientTools`, to be offered next to the gateway's (see client-tools.ts), and
 * `response_format` as `format`, for the orchestrator to compile (answer-format.ts).
 *
 * @example
 *   const request = parseChatRequest(ctx.request.body) // throws InvalidRequest on bad input
 */
import { z } from 'zod';
import { echoed, invalidRequestFrom, InvalidRequest } from '../errors.js';
import type { UpstreamMessage } from './chat-types.js';
import { clientToolsFrom, clientToolChoiceSchema, clientFunctionSchema, functionName, type ClientTools } from './client-tools.js';
import type { FormatRequest } from './answer-format.js';
import { unpairedTool } from './tool-pairing.js';

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const content = z.union([z.string(), z.array(textPart)]);

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content }),
  // OpenAI's newer name for system instructions (o-series clients send it); upstreams get `system`.
  z.object({ role: z.literal('developer'), content }),
  z.object({ role: z.literal('user'), content }),
  z.object({ role: z.literal('assistant'), content: content.nullish(), tool_calls: z.array(toolCall).optional() }),
  z.object({ role: z.literal('tool'), content, tool_call_id: z.string().min(1) }),
]);

const positiveInt = z.number().int().positive();

/** `response_format`: https://platform.openai.com/docs/api-reference/chat/create#chat-create-response_format */
const responseFormat = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object') }),
    z.object({
      type: z.literal('json_schema'),
      json_schema: z.object({
        name: functionName,
        description: z.string().optional(),
        schema: z.record(z.string(), z.unknown()).optional().meta({ description: 'A JSON Schema (draft-07 or 2020-12, by its $schema)' }),
        strict: z.boolean().nullish(),
      }),
    }),
  ])
  .meta({
    description:
      "The answer format. With `json_object` or `json_schema` the answer is JSON alone (tool rounds' text is left out); " +
      'an answer that does not parse or validate gets one corrective call, and with `strict: true` one still invalid is a 502.',
  });

/** The request body as validated (exported for the OpenAPI document). */
export const chatRequestSchema = z.object({
  messages: z.array(message).min(1, 'messages must hold at least one message'),
  model: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  seed: z.number().int().nullish(),
  user: z.string().nullish(),
  n: z.number().int().positive().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  tool_choice: clientToolChoiceSchema.nullish(),
  tools: z.array(clientFunctionSchema).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormat.nullish(),
  functions: z.unknown().optional(),
  function_call: z.unknown().optional(),
});

export interface ChatRequest {
  messages: UpstreamMessage[];
  model?: string;
  stream: boolean;
  includeUsage: boolean;
  /** The client's functions and how it wants them called; `choice: 'none'` turns every tool off. */
  clientTools: ClientTools;
  maxTokens?: number;
  sampling: { temperature?: number; top_p?: number; stop?: string | string[]; seed?: number; user?: string };
  /** `response_format`, unchecked yet (its schema is compiled by ChatOrchestrator.answerFormat). */
  format?: FormatRequest;
}

/** Parse and check a request body; every refusal is a 400 naming the field. */
export function parseChatRequest(body: unknown): ChatRequest {
  const parsed = chatRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidRequestFrom(parsed.error, { prefix: 'Invalid request: ' });
  const r = parsed.data;
  const functions = r.functions;
  if (functions !== undefined && functions !== null && !(Array.isArray(functions) && functions.length === 0)) {
    throw new InvalidRequest(
      'The legacy "functions" parameter is not supported: send your functions as "tools" entries of type "function".',
      'functions',
      'unsupported_parameter',
    );
  }
  if (r.function_call !== undefined && r.function_call !== null && r.function_call !== 'none' && r.function_call !== 'auto') {
    throw new InvalidRequest(
      'function_call is not supported: use "tool_choice" with "tools" entries of type "function".',
      'function_call',
      'unsupported_parameter',
    );
  }
  if (r.n != null && r.n > 1) {
    throw new InvalidRequest('n must be 1: the gateway returns one choice.', 'n', 'unsupported_parameter');
  }
  const clientTools = clientToolsFrom({
    tools: r.tools ?? [],
    choice: r.function_call === 'none' ? 'none' : (r.tool_choice ?? 'auto'),
    parallel: r.parallel_tool_calls ?? undefined,
  });

  const sampling: ChatRequest['sampling'] = {};
  if (r.temperature != null) sampling.temperature = r.temperature;
  if (r.top_p != null) sampling.top_p = r.top_p;
  if (r.stop != null) sampling.stop = r.stop;
  if (r.seed != null) sampling.seed = r.seed;
  if (r.user != null) sampling.user = r.user;
  const messages = r.messages.map(toUpstream);
  const unpaired = unpairedTool(messages);
  if (unpaired?.kind === 'result_without_call') {
    throw new InvalidRequest(
      `Invalid parameter: messages with role 'tool' must answer a call of an earlier assistant message's 'tool_calls'; no call has the id "${echoed(unpaired.id)}".`,
      `messages.${unpaired.index}.tool_call_id`,
    );
  }
  if (unpaired) {
    throw new InvalidRequest(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${unpaired.id}`,
      `messages.${unpaired.index}.tool_calls`,
    );
  }
  return {
    messages,
    model: r.model,
    stream: r.stream === true,
    includeUsage: r.stream_options?.include_usage === true,
    clientTools,
    maxTokens: r.max_completion_tokens ?? r.max_tokens ?? undefined,
    sampling,
    ...(r.response_format ? { format: formatRequest(r.response_format) } : {}),
  };
}

function formatRequest(format: z.infer<typeof responseFormat>): FormatRequest {
  if (format.type !== 'json_schema') return { type: format.type };
  const { name, description, schema, strict } = format.json_schema;
  return { type: 'json_schema', name, description, schema, strict: strict ?? undefined };
}

function text(value: z.infer<typeof content>): string {
  return typeof value === 'string' ? value : value.map((p) => p.text).join('');
}

function toUpstream(m: z.infer<typeof message>): UpstreamMessage {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text(m.content) };
    case 'user':
      return { role: 'user', content: text(m.content) };
    case 'assistant':
      return m.tool_calls?.length
        ? { role: 'assistant', content: m.content == null ? null : text(m.content), tool_calls: m.tool_calls }
        : { role: 'assistant', content: m.content == null ? '' : text(m.content) };
    case 'tool':
      return { role: 'tool', content: text(m.content), tool_call_id: m.tool_call_id };
  }
}
