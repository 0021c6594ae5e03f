/**
 * The Responses API request body (`POST /v1/responses`), validated with zod and translated into
 * what the chat loop runs: `input` (a string, or items) becomes checked input items (input-items.ts;
 * `item_reference`s are resolved against stored responses later, item-references.ts),
 * `instructions` a system message, `max_output_tokens` the token cap, `text.format` the answer
 * format (compiled by the orchestrator, answer-format.ts), and the client's `function` tools (flat in
 * this format) the chat format's functions, offered next to the gateway's tools under the same
 * rules as chat (client-tools.ts). Fields it does not know are ignored, as for chat, and so are the
 * `include` values (none names anything the gateway has to add); what the gateway cannot honour
 * (other tool types, images) is a 400 naming the field.
 * Wire format: https://platform.openai.com/docs/api-reference/responses/create (and the types
 * of the official `openai` client, resources/responses/responses.ts).
 *
 * @example
 *   const request = parseResponsesRequest({ model: 'conductor', input: 'Hello' })
 *   request.input // [{ role: 'user', content: 'Hello' }]
 */
import { z } from 'zod';
import { echoed, invalidRequestFrom, InvalidRequest, parseAt } from '../errors.js';
import { clientToolsFrom, functionName, type ClientTools } from '../chat/client-tools.js';
import type { FormatRequest } from '../chat/answer-format.js';
import type { InputItem } from './input-items.js';

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

/** An item of a stored response, by id (the AI SDK's OpenAI provider sends earlier turns so, `store` being on). */
const itemReference = z.object({ type: z.literal('item_reference'), id: z.string().min(1) });

const otherItem = z.looseObject({ type: z.string() });

const inputItem = z.union([messageItem, functionCallItem, functionCallOutputItem, mcpCallItem, itemReference, otherItem]);

const positiveInt = z.number().int().positive();

/** `text.format`: https://platform.openai.com/docs/api-reference/responses/create#responses-create-text */
const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    name: functionName,
    description: z.string().nullish(),
    schema: z.record(z.string(), z.unknown()).meta({ description: 'A JSON Schema (draft-07 or 2020-12, by its $schema)' }),
    strict: z.boolean().nullish(),
  }),
]);

/** A function tool in this format: flat, not wrapped in `function` as in chat. */
const functionTool = z.object({
  type: z.literal('function'),
  name: functionName,
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), name: functionName }),
  z.looseObject({ type: z.string() }),
]);

/** The request body as validated (exported for the OpenAPI document). */
export const responsesRequestSchema = z.object({
  model: z.string().min(1).optional(),
  input: z.union([z.string(), z.array(inputItem)]).meta({ description: 'A user message, or input items' }),
  instructions: z.string().nullish().meta({ description: 'A system message for this response only (not carried by previous_response_id)' }),
  tools: z
    .array(z.union([functionTool, z.looseObject({ type: z.string() })]))
    .nullish()
    .meta({ description: "Functions of the client's own (type `function`), offered next to the gateway's tools" }),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_output_tokens: positiveInt.nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish().meta({ description: 'Keep the response for GET and previous_response_id (default true)' }),
  previous_response_id: z.string().min(1).nullish(),
  text: z
    .object({ format: textFormat.optional(), verbosity: z.string().nullish() })
    .nullish()
    .meta({
      description:
        'The answer format (`text.format`). With `json_object` or `json_schema` the answer is one `message` item holding JSON alone ' +
        "(tool rounds' text emits no `output_text`); an answer that does not parse or validate gets one corrective call, and " +
        'with `strict: true` one still invalid fails the response (502 `upstream_invalid_output`). `verbosity` is accepted and ignored.',
    }),
  include: z.array(z.string()).nullish().meta({
    description:
      'Accepted; every value is ignored (encrypted reasoning, logprobs, file, web-search and image outputs are not kept by the gateway)',
  }),
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys')
    .nullish(),
  user: z.string().nullish(),
});

/** A function tool as the response object echoes it. */
export interface EchoedFunctionTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

export interface ResponsesRequest {
  model?: string;
  /** This turn's input items, checked; `item_reference`s still to resolve. */
  input: InputItem[];
  instructions?: string;
  /** The client's functions and tool_choice, in the chat loop's terms. */
  clientTools: ClientTools;
  /** Echoed in the response object, in this format. */
  tools: EchoedFunctionTool[];
  toolChoice: 'auto' | 'none' | 'required' | { type: 'function'; name: string };
  parallelToolCalls: boolean;
  maxOutputTokens?: number;
  sampling: { temperature?: number; top_p?: number; user?: string };
  stream: boolean;
  store: boolean;
  previousResponseId?: string;
  metadata: Record<string, string>;
  /** `text.format`, unchecked yet (its schema is compiled by ChatOrchestrator.answerFormat). */
  format?: FormatRequest;
  /** `text.format` as the response object echoes it. */
  textFormat: Record<string, unknown>;
}

/** Parse and check a request body; every refusal is a 400 naming the field. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const parsed = responsesRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidRequestFrom(parsed.error, { prefix: 'Invalid request: ' });
  const r = parsed.data;
  const { tools, toolChoice, clientTools } = toolsOf(r);
  if (typeof r.input === 'string' ? r.input === '' : r.input.length === 0) {
    throw new InvalidRequest('Invalid request: input must not be empty.', 'input');
  }
  const sampling: ResponsesRequest['sampling'] = {};
  if (r.temperature != null) sampling.temperature = r.temperature;
  if (r.top_p != null) sampling.top_p = r.top_p;
  if (r.user != null) sampling.user = r.user;
  return {
    model: r.model,
    input: typeof r.input === 'string' ? [{ type: 'message', role: 'user', text: r.input }] : inputItems(r.input),
    instructions: r.instructions ?? undefined,
    clientTools,
    tools,
    toolChoice,
    parallelToolCalls: r.parallel_tool_calls ?? true,
    maxOutputTokens: r.max_output_tokens ?? undefined,
    sampling,
    stream: r.stream === true,
    store: r.store !== false,
    previousResponseId: r.previous_response_id ?? undefined,
    metadata: r.metadata ?? {},
    ...formatOf(r.text?.format),
  };
}

/** `text.format` as the orchestrator takes it, and as the response echoes it (`{type: "text"}` when absent). */
function formatOf(format: z.infer<typeof textFormat> | undefined): Pick<ResponsesRequest, 'format' | 'textFormat'> {
  if (!format) return { textFormat: { type: 'text' } };
  if (format.type !== 'json_schema') return { format: { type: format.type }, textFormat: { type: format.type } };
  const { name, schema } = format;
  const description = format.description ?? undefined;
  const strict = format.strict ?? undefined;
  return {
    format: { type: 'json_schema', name, description, schema, strict },
    textFormat: { type: 'json_schema', name, ...(description !== undefined ? { description } : {}), schema, strict: strict ?? null },
  };
}

/** The client's function tools and tool_choice: as echoed in this format, and as the chat loop takes them. */
function toolsOf(r: z.infer<typeof responsesRequestSchema>): Pick<ResponsesRequest, 'tools' | 'toolChoice' | 'clientTools'> {
  const tools = (r.tools ?? []).map((tool, i) => {
    if (tool.type === 'function') return parseAt(functionTool, tool, `tools[${i}]`);
    throw new InvalidRequest(
      `Tools of type "${echoed(tool.type)}" are not supported: the gateway runs its own tools (each run is an mcp_call item); bring functions of your own as type "function".`,
      `tools[${i}].type`,
      'unsupported_parameter',
    );
  });
  const choice = r.tool_choice ?? 'auto';
  if (typeof choice === 'object' && (choice.type !== 'function' || typeof choice.name !== 'string')) {
    throw new InvalidRequest(
      `tool_choice of type "${echoed(String(choice.type))}" is not supported: use "auto", "none", "required" or a function of your own.`,
      'tool_choice',
      'unsupported_parameter',
    );
  }
  const toolChoice = choice as ResponsesRequest['toolChoice'];
  const clientTools = clientToolsFrom({
    tools: tools.map(({ name, description, parameters, strict }) => ({
      type: 'function',
      function: {
        name,
        ...(description != null ? { description } : {}),
        ...(parameters != null ? { parameters } : {}),
        ...(strict != null ? { strict } : {}),
      },
    })),
    choice: typeof toolChoice === 'object' ? { type: 'function', function: { name: toolChoice.name } } : toolChoice,
    parallel: r.parallel_tool_calls ?? undefined,
  });
  return {
    tools: tools.map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? null,
    })),
    toolChoice,
    clientTools,
  };
}

/** Each input item checked against its own schema (a failure names the item), text parts joined. */
function inputItems(items: Array<z.infer<typeof inputItem>>): InputItem[] {
  return items.map((item, i): InputItem => {
    const at = `input[${i}]`;
    const type = item.type ?? 'message';
    const id = 'id' in item && typeof item.id === 'string' ? { id: item.id } : {};
    switch (type) {
      case 'function_call': {
        const call = parseAt(functionCallItem, item, at);
        return { type, ...id, call_id: call.call_id, name: call.name, arguments: call.arguments };
      }
      case 'mcp_call': {
        const call = parseAt(mcpCallItem, item, at);
        return { type, id: call.id, name: call.name, arguments: call.arguments, output: call.output ?? null, error: call.error ?? null };
      }
      case 'function_call_output': {
        const result = parseAt(functionCallOutputItem, item, at);
        return { type, ...id, call_id: result.call_id, output: partsText(result.output, `${at}.output`) };
      }
      case 'item_reference':
        return { type, id: parseAt(itemReference, item, at).id };
    }
    if (type !== 'message' || !('role' in item)) {
      throw new InvalidRequest(`Input items of type "${echoed(type)}" are not supported.`, `${at}.type`, 'unsupported_parameter');
    }
    const message = parseAt(messageItem, item, at);
    return { type: 'message', ...id, role: message.role, text: partsText(message.content, `${at}.content`) };
  });
}

/** Text content: a string, or text parts joined; any other part is a 400 naming it. */
function partsText(content: string | Array<{ type: string; text?: unknown; refusal?: unknown }>, at: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((part, j) => {
      if (typeof part.text === 'string') return part.text;
      if (typeof part.refusal === 'string') return part.refusal;
      throw new InvalidRequest(
        `Content parts of type "${echoed(part.type)}" are not supported: send text.`,
        `${at}[${j}].type`,
        'unsupported_parameter',
      );
    })
    .join('');
}
