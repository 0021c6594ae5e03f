/**
 * A message's `content` blocks, built from the chat loop's progress as it happens: the model's
 * text as `text` blocks (a new one after each tool round), each gateway tool run as an
 * `mcp_tool_use` block (`id` `mcptoolu_…`, `server_name` the tool server's configured name, the
 * whole `input`) and, once the round ends, its `mcp_tool_result` block (`is_error`, the result as
 * the model read it in one text block), as Anthropic's MCP connector writes them
 * (https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector); calls of the client's own
 * tools as `tool_use` blocks. Every step is also sent as the format's streaming event
 * (https://docs.claude.com/en/docs/build-with-claude/streaming): `content_block_start`, then
 * `text_delta` or, for a client `tool_use`, one `input_json_delta`, then `content_block_stop`. An
 * `mcp_tool_use` block starts with its whole `input` and takes no delta, so both the official SDK's
 * and the AI SDK's stream readers see it whole. A JSON answer sends the events nowhere.
 *
 * @example
 *   const output = new MessageOutput({ serverOf: () => 'echo', events })
 *   output.append('Hello')
 *   output.finish()
 *   output.blocks // [{ type: 'text', text: 'Hello' }]
 */
import { randomBytes } from 'node:crypto';
import type { ToolTraceEntry, UpstreamToolCall } from '../chat/chat-types.js';

/** Where the builder sends each event: the stream's writer (http/sse/message-event-writer.ts). */
export interface MessageEvents {
  send(type: string, fields: Record<string, unknown>): void;
}

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface McpToolUseBlock {
  type: 'mcp_tool_use';
  id: string;
  name: string;
  server_name: string;
  input: unknown;
}

export interface McpToolResultBlock {
  type: 'mcp_tool_result';
  tool_use_id: string;
  is_error: boolean;
  content: TextBlock[];
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ContentBlock = TextBlock | McpToolUseBlock | McpToolResultBlock | ToolUseBlock;

/** `<prefix>_` and 24 random base-62-ish characters, as the format's ids look (`msg_…`, `mcptoolu_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(18).toString('base64url')}`;
}

const NO_EVENTS: MessageEvents = { send() {} };

export class MessageOutput {
  readonly blocks: ContentBlock[] = [];
  private text?: { block: TextBlock; index: number };
  /** The mcp_tool_use blocks of the round under way, in call order. */
  private running: McpToolUseBlock[] = [];
  private readonly serverOf: (tool: string) => string;
  private readonly events: MessageEvents;

  constructor(options: { serverOf: (tool: string) => string; events?: MessageEvents }) {
    this.serverOf = options.serverOf;
    this.events = options.events ?? NO_EVENTS;
  }

  /** Visible text of the model, in order. */
  readonly append = (piece: string): void => {
    if (!this.text) {
      // A call after a tool round starts with the blank line that joins answers in chat: a new block needs none.
      piece = this.blocks.length ? piece.trimStart() : piece;
      if (piece === '') return;
      const block: TextBlock = { type: 'text', text: '' };
      this.text = { block, index: this.start(block) };
    }
    const open = this.text;
    open.block.text += piece;
    this.events.send('content_block_delta', { index: open.index, delta: { type: 'text_delta', text: piece } });
  };

  /** A tool round starts: the text so far ends its block, and each call is an `mcp_tool_use` block, whole. */
  toolsRunning(calls: UpstreamToolCall[]): void {
    this.closeText();
    for (const call of calls) {
      const block: McpToolUseBlock = {
        type: 'mcp_tool_use',
        id: newId('mcptoolu'),
        name: call.function.name,
        server_name: this.serverOf(call.function.name),
        input: inputOf(call.function.arguments),
      };
      this.stop(this.start(block));
      this.running.push(block);
    }
  }

  /** The round finished: each call's result, as the model read it, follows as an `mcp_tool_result` block. */
  toolsDone(trace: ToolTraceEntry[], results: string[]): void {
    this.running.forEach((use, i) => {
      const block: McpToolResultBlock = {
        type: 'mcp_tool_result',
        tool_use_id: use.id,
        is_error: !trace[i].ok,
        content: [{ type: 'text', text: results[i] }],
      };
      this.stop(this.start(block));
    });
    this.running = [];
  }

  /** The loop handed the client calls of its tools: each is a `tool_use` block, its input in one `input_json_delta`. */
  toolUses(calls: UpstreamToolCall[]): void {
    this.closeText();
    for (const call of calls) {
      const input = inputOf(call.function.arguments);
      const block: ToolUseBlock = { type: 'tool_use', id: call.id, name: call.function.name, input: {} };
      const index = this.start(block);
      block.input = input;
      this.events.send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } });
      this.stop(index);
    }
  }

  /** The loop ended: close the open text block. */
  finish(): void {
    this.closeText();
  }

  private closeText(): void {
    if (!this.text) return;
    this.stop(this.text.index);
    this.text = undefined;
  }

  /** Add a block and announce it as it is now (the writer serializes at once, so later changes do not leak in). */
  private start(block: ContentBlock): number {
    const index = this.blocks.push(block) - 1;
    this.events.send('content_block_start', { index, content_block: block });
    return index;
  }

  private stop(index: number): void {
    this.events.send('content_block_stop', { index });
  }
}

/**
 * A call's arguments as the block's `input` object. A model that wrote something else (malformed
 * JSON, a bare value) gets `{}` here; the tool run itself saw the text as written and answered it.
 */
function inputOf(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // not JSON: an empty input
  }
  return {};
}
