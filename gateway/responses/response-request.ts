/**
 * The Responses API request body (`POST /v1/responses`), validated with zod and translated into
 * what the chat loop runs: `input` (a string, or items) becomes upstream messages, `instructions`
 * a system message, `max_output_tokens` the token cap. Fields it does not know are ignored, as for
 * chat; what the gateway cannot honour is a 400 naming the field.
 * Wire format: https://platform.openai.com/docs/api-reference/responses/create (and the types
 * of the official `openai` client, resources/responses/responses.ts).
 *
 * @example
 *   const request = parseResponsesRequest({ model: 'conductor', input: 'Hello' })
 *   request.input // [{ role: 'user', content: 'Hello' }]
 */
import { z } from 'zod';
import { invalidRequestFrom, InvalidRequest, zodIssue } from '../errors.js';
import type { UpstreamMessage, UpstreamToolCall } from '../chat/chat-types.js';

/** Text parts a message may hold: the client's own (`input_text`) and earlier answers echoed back (`output_text`). */
const textPart = z.object({ type: z.enum(['input_text', 'output_text']), text: z.string() });
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });
const otherPart = z.looseObject({ type: z.string() });

const messageItem = z.object({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content: z.union([z.string(), z.array(z.union([textPart, refusalPart, otherPart]))]),
});

const functionCallItem = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

const functionCallOutputItem = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(z.union([textPart, otherPart]))]),
});

/** A gateway tool run of an earlier response, echoed back by a client that keeps its own history. */
const mcpCallItem = z.object({
  type: z.literal('mcp_call'),
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  output: z.string().nullish(),
  error: z.string().nullish(),
});

const otherItem = z.looseObject({ type: z.string() });

const inputItem = z.union([messageItem, functionCallItem, functionCallOutputItem, mcpCallItem, otherItem]);

const positiveInt = z.number().int().positive();

/** The request body as validated (exported for the OpenAPI document). */
export const responsesRequestSchema = z.object({
  model: z.string().min(1).optional(),
  input: z.union([z.string(), z.array(inputItem)]).meta({ description: 'A user message, or input items' }),
  instructions: z.string().nullish().meta({ description: 'A system message for this response only (not carried by previous_response_id)' }),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: z.unknown().optional(),
  parallel_tool_calls: z.boolean().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_output_tokens: positiveInt.nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish().meta({ description: 'Keep the response for GET and previous_response_id (default true)' }),
  previous_response_id: z.string().min(1).nullish(),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullish(),
  user: z.string().nullish(),
});

type InputItem = z.infer<typeof inputItem>;

export interface ResponsesRequest {
  model?: string;
  /** This turn's input as upstream messages. */
  input: UpstreamMessage[];
  instructions?: string;
  toolsEnabled: boolean;
  /** Echoed in the response object. */
  toolChoice: 'auto' | 'none';
  parallelToolCalls: boolean;
  maxOutputTokens?: number;
  sampling: { temperature?: number; top_p?: number; user?: string };
  stream: boolean;
  store: boolean;
  previousResponseId?: string;
  metadata: Record<string, string>;
}

/** Parse and check a request body; every refusal is a 400 naming the field. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const parsed = responsesRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidRequestFrom(parsed.error, { prefix: 'Invalid request: ' });
  const r = parsed.data;
  const tool = r.tools?.[0];
  if (tool) {
    throw new InvalidRequest(
      `Tools of type "${tool.type}" are not supported: the gateway runs its own tools and shows each run as an mcp_call item. Remove "tools".`,
      'tools[0].type',
      'unsupported_parameter',
    );
  }
  const toolChoice = r.tool_choice ?? 'auto';
  if (toolChoice !== 'auto' && toolChoice !== 'none') {
    throw new InvalidRequest(
      'tool_choice must be "auto" or "none": the gateway decides which of its tools to run.',
      'tool_choice',
      'unsupported_parameter',
    );
  }
  if (typeof r.input === 'string' ? r.input === '' : r.input.length === 0) {
    throw new InvalidRequest('Invalid request: input must not be empty.', 'input');
  }
  const sampling: ResponsesRequest['sampling'] = {};
  if (r.temperature != null) sampling.temperature = r.temperature;
  if (r.top_p != null) sampling.top_p = r.top_p;
  if (r.user != null) sampling.user = r.user;
  return {
    model: r.model,
    input: typeof r.input === 'string' ? [{ role: 'user', content: r.input }] : inputMessages(r.input),
    instructions: r.instructions ?? undefined,
    toolsEnabled: toolChoice !== 'none',
    toolChoice,
    parallelToolCalls: r.parallel_tool_calls ?? true,
    maxOutputTokens: r.max_output_tokens ?? undefined,
    sampling,
    stream: r.stream === true,
    store: r.store !== false,
    previousResponseId: r.previous_response_id ?? undefined,
    metadata: r.metadata ?? {},
  };
}

/**
 * Input items → upstream messages. Calls that follow each other (function calls, gateway tool
 * runs) become one assistant turn with several tool calls, as the model made them; a gateway run's
 * result follows its turn as a tool message.
 */
function inputMessages(items: InputItem[]): UpstreamMessage[] {
  const messages: UpstreamMessage[] = [];
  let turn: { calls: UpstreamToolCall[]; results: UpstreamMessage[] } | undefined;
  const closeTurn = () => {
    if (!turn) return;
    messages.push({ role: 'assistant', content: null, tool_calls: turn.calls }, ...turn.results);
    turn = undefined;
  };
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    const type = item.type ?? 'message';
    if (type === 'function_call' || type === 'function_call_output') {
      throw new InvalidRequest(
        `Input items of type "${type}" are not supported: the gateway offers no client function tools yet.`,
        `${at}.type`,
        'unsupported_parameter',
      );
    }
    if (type === 'mcp_call') {
      const call = parseItem(mcpCallItem, item, at);
      turn ??= { calls: [], results: [] };
      turn.calls.push({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } });
      const content = call.error != null ? JSON.stringify({ error: { code: 'tool_error', message: call.error } }) : (call.output ?? 'null');
      turn.results.push({ role: 'tool', tool_call_id: call.id, content });
      return;
    }
    if (type !== 'message' || !('role' in item)) {
      throw new InvalidRequest(`Input items of type "${type}" are not supported.`, `${at}.type`, 'unsupported_parameter');
    }
    closeTurn();
    const message = parseItem(messageItem, item, at);
    const content = messageText(message.content, at);
    messages.push(
      message.role === 'assistant' ? { role: 'assistant', content } : { role: message.role === 'user' ? 'user' : 'system', content },
    );
  });
  closeTurn();
  return messages;
}

function messageText(content: z.infer<typeof messageItem>['content'], at: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((part, j) => {
      if ('text' in part && typeof part.text === 'string') return part.text;
      if ('refusal' in part && typeof part.refusal === 'string') return part.refusal;
      throw new InvalidRequest(
        `Content parts of type "${part.type}" are not supported: send text.`,
        `${at}.content[${j}].type`,
        'unsupported_parameter',
      );
    })
    .join('');
}

/** One input item against its own schema; a failure names the field under `input[i]`. */
function parseItem<T extends z.ZodType>(schema: T, item: InputItem, at: string): z.infer<T> {
  const parsed = schema.safeParse(item);
  if (parsed.success) return parsed.data;
  const { param, message } = zodIssue(parsed.error);
  throw new InvalidRequest(`Invalid request: ${at}.${message}`, param ? `${at}.${param}` : at);
}
