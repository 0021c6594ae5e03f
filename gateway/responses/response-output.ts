/**
 * A response's `output` items, built from the chat loop's progress as it happens: the model's
 * text as a `message` item with one `output_text` part (a new item after each tool round), each
 * gateway tool run as an `mcp_call` item (`server_label` = the tool server's name, `output` or
 * `error`), and calls of the client's own functions as `function_call` items. Every step is also
 * sent as the documented streaming event (a JSON answer sends them nowhere).
 * Item and event shapes: https://platform.openai.com/docs/api-reference/responses/object and
 * /responses-streaming (`ResponseOutputMessage`, `McpCall`, `ResponseTextDeltaEvent`, … in the
 * `openai` client's types).
 *
 * @example
 *   const output = new ResponseOutput({ serverOf: (tool) => 'onchain', events })
 *   output.append('Hello')
 *   output.finish('completed')
 *   output.items // [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', … }], … }]
 */
import { randomBytes } from 'node:crypto';
import type { ToolTraceEntry, UpstreamToolCall } from '../chat/chat-types.js';

/**
 * Where the output builder sends each step as its streaming event: the streaming route's
 * Server-Sent Events writer (http/sse/response-event-writer.ts); the JSON route sends them nowhere.
 */
export interface ResponseEvents {
  send(type: string, fields: Record<string, unknown>): void;
}

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: [];
  logprobs: [];
}

export interface MessageItem {
  id: string;
  type: 'message';
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: OutputText[];
}

export interface McpCallItem {
  id: string;
  type: 'mcp_call';
  status: 'in_progress' | 'completed' | 'failed';
  server_label: string;
  name: string;
  arguments: string;
  output: string | null;
  error: string | null;
}

export interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: 'in_progress' | 'completed';
  call_id: string;
  name: string;
  arguments: string;
}

export type OutputItem = MessageItem | McpCallItem | FunctionCallItem;

/** `<prefix>_` and 48 random hex digits: ids are not guessable, so one cannot probe another wallet's. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

const NO_EVENTS: ResponseEvents = { send() {} };

export class ResponseOutput {
  readonly items: OutputItem[] = [];
  /** The model's text since the last tool round: the final answer's, once the loop has ended. */
  answerText = '';
  private message?: { item: MessageItem; index: number; part: OutputText };
  /** The mcp_call items of the round under way, in call order. */
  private running: Array<{ item: McpCallItem; index: number }> = [];
  private readonly serverOf: (tool: string) => string;
  private readonly events: ResponseEvents;

  constructor(options: { serverOf: (tool: string) => string; events?: ResponseEvents }) {
    this.serverOf = options.serverOf;
    this.events = options.events ?? NO_EVENTS;
  }

  /** Visible text of the model, in order. */
  readonly append = (piece: string): void => {
    if (!this.message) {
      // A call after a tool round starts with the blank line that joins answers in chat: a new item needs none.
      piece = this.items.length ? piece.trimStart() : piece;
      if (piece === '') return;
      this.openMessage();
    }
    const open = this.message!;
    open.part.text += piece;
    this.answerText += piece;
    this.events.send('response.output_text.delta', {
      item_id: open.item.id,
      output_index: open.index,
      content_index: 0,
      delta: piece,
      logprobs: [],
    });
  };

  /** A tool round starts: the text so far ends its item, and each call becomes an `mcp_call` item. */
  toolsRunning(calls: UpstreamToolCall[]): void {
    this.closeMessage('completed');
    this.answerText = '';
    for (const call of calls) {
      const item: McpCallItem = {
        id: newId('mcp'),
        type: 'mcp_call',
        status: 'in_progress',
        server_label: this.serverOf(call.function.name),
        name: call.function.name,
        arguments: '',
        output: null,
        error: null,
      };
      const index = this.add(item);
      const ids = { item_id: item.id, output_index: index };
      this.events.send('response.mcp_call_arguments.delta', { ...ids, delta: call.function.arguments });
      item.arguments = call.function.arguments;
      this.events.send('response.mcp_call_arguments.done', { ...ids, arguments: call.function.arguments });
      this.events.send('response.mcp_call.in_progress', ids);
      this.running.push({ item, index });
    }
  }

  /** The round finished: each call's result (or error) completes its item. */
  toolsDone(trace: ToolTraceEntry[], results: string[]): void {
    this.running.forEach(({ item, index }, i) => {
      const entry = trace[i];
      if (entry.ok) item.output = results[i];
      else item.error = entry.error?.message ?? 'The tool failed.';
      item.status = entry.ok ? 'completed' : 'failed';
      this.events.send(entry.ok ? 'response.mcp_call.completed' : 'response.mcp_call.failed', { item_id: item.id, output_index: index });
      this.events.send('response.output_item.done', { output_index: index, item });
    });
    this.running = [];
  }

  /** The loop handed the client calls of its functions: each becomes a `function_call` item. */
  functionCalls(calls: UpstreamToolCall[]): void {
    this.closeMessage('completed');
    for (const call of calls) {
      const { name, arguments: args } = call.function;
      const item: FunctionCallItem = {
        id: newId('fc'),
        type: 'function_call',
        status: 'in_progress',
        call_id: call.id,
        name,
        arguments: '',
      };
      const index = this.add(item);
      const ids = { item_id: item.id, output_index: index };
      this.events.send('response.function_call_arguments.delta', { ...ids, delta: args });
      item.arguments = args;
      this.events.send('response.function_call_arguments.done', { ...ids, name, arguments: args });
      item.status = 'completed';
      this.events.send('response.output_item.done', { output_index: index, item });
    }
  }

  /** The loop ended: close the open message. */
  finish(status: 'completed' | 'incomplete'): void {
    this.closeMessage(status);
  }

  private openMessage(): void {
    const part: OutputText = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    const item: MessageItem = { id: newId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    const index = this.add(item);
    item.content.push(part);
    this.events.send('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part });
    this.message = { item, index, part };
  }

  private closeMessage(status: 'completed' | 'incomplete'): void {
    const open = this.message;
    if (!open) return;
    this.message = undefined;
    const ids = { item_id: open.item.id, output_index: open.index, content_index: 0 };
    this.events.send('response.output_text.done', { ...ids, text: open.part.text, logprobs: [] });
    this.events.send('response.content_part.done', { ...ids, part: open.part });
    open.item.status = status;
    this.events.send('response.output_item.done', { output_index: open.index, item: open.item });
  }

  /** Append an item and announce it as it is now (the writer serializes at once, so later changes do not leak in). */
  private add(item: OutputItem): number {
    const index = this.items.push(item) - 1;
    this.events.send('response.output_item.added', { output_index: index, item });
    return index;
  }
}
