/**
 * The Messages API request body (`POST /v1/messages`, and `/v1/messages/count_tokens` without
 * `max_tokens`), validated with zod and translated into what the chat loop runs: `system` the
 * instructions, `messages` the conversation (input-blocks.ts), `max_tokens` the token cap (above a
 * deployment's `maxOutputTokens` the orchestrator clamps it), `stop_sequences` the stop strings,
 * `metadata.user_id` the upstream `user`, and the client's `tools` (`name`, `description`,
 * `input_schema`) functions offered next to the gateway's tools under chat's rules
 * (chat/client-tools.ts): `tool_choice` `auto`, `any` (chat's `required`), `tool` (one function)
 * or `none`, `disable_parallel_tool_use` → `parallel_tool_calls: false`. Fields it does not know
 * (`thinking`, `top_k`, `service_tier`, `context_management`, …) are ignored; a tool of another
 * type (Anthropic's server tools) is a 400 naming it.
 * Wire format: https://docs.claude.com/en/api/messages (and the `@anthropic-ai/sdk` types,
 * resources/messages/messages.ts).
 *
 * @example
 *   const request = parseMessagesRequest({ model: 'conductor', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] })
 *   request.conversation.messages // [{ role: 'user', content: 'Hi' }]
 */
import { z } from 'zod';
import { echoed, InvalidRequest, invalidRequestAt, invalidRequestFrom } from '../errors.js';
import { clientToolsFrom, functionName, type ClientTools } from '../chat/client-tools.js';
import type { UpstreamMessage } from '../chat/chat-types.js';
import { conversationOf, type Conversation } from './input-blocks.js';

const block = z.looseObject({ type: z.string() });

const inputMessage = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(block)]),
});

const systemBlock = z.looseObject({ type: z.string(), text: z.string().optional() });

const clientTool = z.object({
  type: z.literal('custom').optional(),
  name: functionName,
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).meta({ description: 'A JSON Schema of the input object' }),
});

const toolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('tool'), name: functionName, disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('none') }),
]);

/** What count_tokens reads: the request without `max_tokens` and the sampling fields. */
export const countTokensRequestSchema = z.object({
  model: z.string().min(1).meta({ description: 'A model alias or canonical id (other names, such as `claude-…`, are 404)' }),
  system: z
    .union([z.string(), z.array(systemBlock)])
    .optional()
    .meta({ description: 'System text: a string or text blocks (sent first, before the conversation)' }),
  messages: z
    .array(inputMessage)
    .min(1)
    .meta({
      description:
        'The conversation: `text`, `tool_use` / `tool_result`, and the `mcp_tool_use` / `mcp_tool_result` blocks of earlier answers; ' +
        '`thinking` blocks are ignored, any other block is a 400',
    }),
  tools: z
    .array(z.union([clientTool, z.looseObject({ type: z.string().optional() })]))
    .optional()
    .meta({ description: "The client's own tools, offered next to the gateway's" }),
  tool_choice: toolChoice.optional(),
});

/** The request body as validated (exported for the OpenAPI document). */
export const messagesRequestSchema = countTokensRequestSchema.extend({
  max_tokens: z
    .number()
    .int()
    .positive()
    .meta({ description: "The output cap of each upstream call; above the model's `maxOutputTokens` it is lowered to that" }),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  stop_sequences: z.array(z.string()).max(4).optional(),
  stream: z.boolean().optional(),
  metadata: z.object({ user_id: z.string().max(256).nullish() }).optional(),
});

/** A request as the chat loop takes it. */
export interface MessagesRequest {
  model: string;
  /** `system` as a system message (none when absent). */
  instructions: UpstreamMessage[];
  conversation: Conversation;
  clientTools: ClientTools;
  maxTokens?: number;
  sampling: { temperature?: number; top_p?: number; stop?: string[]; user?: string };
  stream: boolean;
}

/** Parse and check a `POST /v1/messages` body; every refusal is a 400 naming the field. */
export function parseMessagesRequest(body: unknown): MessagesRequest {
  const parsed = messagesRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidRequestFrom(parsed.error, { prefix: 'Invalid request: ' });
  const r = parsed.data;
  const sampling: MessagesRequest['sampling'] = {};
  if (r.temperature !== undefined) sampling.temperature = r.temperature;
  if (r.top_p !== undefined) sampling.top_p = r.top_p;
  if (r.stop_sequences?.length) sampling.stop = r.stop_sequences;
  if (r.metadata?.user_id != null) sampling.user = r.metadata.user_id;
  return { ...common(r), maxTokens: r.max_tokens, sampling, stream: r.stream === true };
}

/** Parse and check a `POST /v1/messages/count_tokens` body. */
export function parseCountTokensRequest(body: unknown): MessagesRequest {
  const parsed = countTokensRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidRequestFrom(parsed.error, { prefix: 'Invalid request: ' });
  return { ...common(parsed.data), sampling: {}, stream: false };
}

function common(
  r: z.infer<typeof countTokensRequestSchema>,
): Pick<MessagesRequest, 'model' | 'instructions' | 'conversation' | 'clientTools'> {
  const system = systemText(r.system);
  return {
    model: r.model,
    instructions: system ? [{ role: 'system', content: system }] : [],
    conversation: conversationOf(r.messages),
    clientTools: clientToolsOf(r),
  };
}

/** `system`: a string, or text blocks joined (any other block is a 400 naming it). */
function systemText(system: string | Array<z.infer<typeof systemBlock>> | undefined): string {
  if (system === undefined || typeof system === 'string') return system ?? '';
  return system
    .map((b, i) => {
      if (b.type === 'text' && typeof b.text === 'string') return b.text;
      throw new InvalidRequest(
        `System blocks of type "${echoed(b.type)}" are not supported: send text.`,
        `system[${i}].type`,
        'unsupported_parameter',
      );
    })
    .join('\n\n');
}

/** The client's tools and tool_choice in chat's terms (the same checks, the same 400s). */
function clientToolsOf(r: z.infer<typeof countTokensRequestSchema>): ClientTools {
  const tools = (r.tools ?? []).map((tool, i) => {
    const parsed = clientTool.safeParse(tool);
    if (parsed.success) return parsed.data;
    if (tool.type !== undefined && tool.type !== 'custom') {
      throw new InvalidRequest(
        `Tools of type "${echoed(String(tool.type))}" are not supported: the gateway runs its own tools (each run is an mcp_tool_use block); ` +
          'bring tools of your own with name, description and input_schema.',
        `tools[${i}].type`,
        'unsupported_parameter',
      );
    }
    throw invalidRequestAt(parsed.error, `tools[${i}]`);
  });
  const choice = r.tool_choice ?? { type: 'auto' };
  const disableParallel = 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true;
  return clientToolsFrom({
    tools: tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema },
    })),
    choice:
      choice.type === 'any' ? 'required' : choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type,
    ...(disableParallel ? { parallel: false } : {}),
  });
}
