/**
 * A Messages request's `messages` (string or block content) → the upstream conversation. User
 * turns: `text` blocks joined into one user message, each `tool_result` a tool message (before the
 * text, as the format puts results first). Assistant turns: `text` and `tool_use` blocks one
 * assistant message with its calls; the gateway's own `mcp_tool_use` / `mcp_tool_result` blocks,
 * which a client echoes back from an earlier answer, become the tool rounds they were: the model's
 * turn with its calls, then each result as a tool message (text or a call after results starts the
 * next round; a client's `tool_use` the model made beside gateway calls becomes a turn of its own). `thinking` and `redacted_thinking` blocks are dropped; any other block is a 400
 * naming `messages[i].content[j].type`.
 *
 * A conversation that echoes gateway rounds carries them itself, so the rounds the orchestrator
 * kept for those turns must not be spliced in again: everything up to the last assistant turn
 * with gateway blocks is `history` (sent as it is), only what follows is `messages` (where kept
 * rounds are restored). Block shapes: https://docs.claude.com/en/api/messages (content blocks) and
 * the MCP connector, https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector.
 *
 * @example
 *   conversationOf([{ role: 'user', content: 'Hi' }]) // { history: [], messages: [{ role: 'user', content: 'Hi' }] }
 */
import { z } from 'zod';
import { echoed, InvalidRequest, parseAt } from '../errors.js';
import type { UpstreamMessage, UpstreamToolCall } from '../chat/chat-types.js';

const textBlock = z.object({ type: z.literal('text'), text: z.string() });

const toolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
});

const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().nullish(),
});

const mcpToolUseBlock = z.object({
  type: z.literal('mcp_tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  server_name: z.string().optional(),
  input: z.unknown(),
});

const mcpToolResultBlock = z.object({
  type: z.literal('mcp_tool_result'),
  tool_use_id: z.string().min(1),
  is_error: z.boolean().nullish(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
});

/** Blocks a client may send whose content the gateway cannot use and the format lets it leave out. */
const IGNORED = new Set(['thinking', 'redacted_thinking']);

/** A block as the request schema passed it: its type, and fields its own schema checks. */
export type InputBlock = { type: string; [field: string]: unknown };

export type InputMessage = { role: 'user' | 'assistant'; content: string | InputBlock[] };

/** The conversation split where kept rounds may apply (see above). */
export interface Conversation {
  history: UpstreamMessage[];
  messages: UpstreamMessage[];
}

export function conversationOf(input: InputMessage[]): Conversation {
  const out: UpstreamMessage[] = [];
  let echoEnd = 0;
  input.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (typeof message.content === 'string') {
      out.push(message.role === 'user' ? { role: 'user', content: message.content } : { role: 'assistant', content: message.content });
      return;
    }
    if (message.role === 'user') out.push(...userTurn(message.content, at));
    else {
      const { turns, echo } = assistantTurns(message.content, at);
      out.push(...turns);
      if (echo) echoEnd = out.length;
    }
  });
  return { history: out.slice(0, echoEnd), messages: out.slice(echoEnd) };
}

function userTurn(blocks: InputBlock[], at: string): UpstreamMessage[] {
  const results: UpstreamMessage[] = [];
  const texts: string[] = [];
  blocks.forEach((block, j) => {
    const where = `${at}.content[${j}]`;
    if (block.type === 'text') texts.push(parseAt(textBlock, block, where).text);
    else if (block.type === 'tool_result') {
      const result = parseAt(toolResultBlock, block, where);
      const text = blocksText(result.content ?? '', `${where}.content`);
      // The chat format has no error flag on a tool message: the model reads it in the text.
      results.push({ role: 'tool', tool_call_id: result.tool_use_id, content: result.is_error ? `Error: ${text}` : text });
    } else if (!IGNORED.has(block.type)) unsupported(block.type, where);
  });
  return texts.length ? [...results, { role: 'user', content: texts.join('\n\n') }] : results;
}

/** One assistant message's blocks as its rounds; `echo` when it carried gateway blocks. */
function assistantTurns(blocks: InputBlock[], at: string): { turns: UpstreamMessage[]; echo: boolean } {
  const turns: UpstreamMessage[] = [];
  let turn: { text: string[]; calls: UpstreamToolCall[]; results: UpstreamMessage[] } = { text: [], calls: [], results: [] };
  let echo = false;
  const close = () => {
    const content = turn.text.length ? turn.text.join('') : null;
    if (turn.calls.length) turns.push({ role: 'assistant', content, tool_calls: turn.calls }, ...turn.results);
    else if (content !== null) turns.push({ role: 'assistant', content });
    turn = { text: [], calls: [], results: [] };
  };
  blocks.forEach((block, j) => {
    const where = `${at}.content[${j}]`;
    // Text or a call after a round's results is the model's next call: within a round the gateway
    // writes every mcp_tool_use before the results (message-output.ts).
    if (turn.results.length && block.type !== 'mcp_tool_result' && !IGNORED.has(block.type)) close();
    switch (block.type) {
      case 'text':
        turn.text.push(parseAt(textBlock, block, where).text);
        return;
      case 'tool_use': {
        const use = parseAt(toolUseBlock, block, where);
        turn.calls.push(call(use.id, use.name, use.input));
        return;
      }
      case 'mcp_tool_use': {
        echo = true;
        const use = parseAt(mcpToolUseBlock, block, where);
        turn.calls.push(call(use.id, use.name, use.input ?? {}));
        return;
      }
      case 'mcp_tool_result': {
        echo = true;
        const result = parseAt(mcpToolResultBlock, block, where);
        turn.results.push({ role: 'tool', tool_call_id: result.tool_use_id, content: blocksText(result.content, `${where}.content`) });
        return;
      }
    }
    if (!IGNORED.has(block.type)) unsupported(block.type, where);
  });
  close();
  return { turns, echo };
}

function call(id: string, name: string, input: unknown): UpstreamToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(input) } };
}

/** A result's content: a string, or text blocks joined; any other block is a 400 naming it. */
function blocksText(content: string | Array<{ type: string; text?: unknown }>, at: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((block, k) => {
      if (block.type === 'text' && typeof block.text === 'string') return block.text;
      return unsupported(block.type, `${at}[${k}]`);
    })
    .join('');
}

function unsupported(type: string, at: string): never {
  throw new InvalidRequest(
    `Content blocks of type "${echoed(type)}" are not supported: send text (the gateway's models read text only).`,
    `${at}.type`,
    'unsupported_parameter',
  );
}
