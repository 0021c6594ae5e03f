/**
 * A Responses request's input items once checked (response-request.ts): what the model reads of
 * them (`inputMessages`), how `GET /v1/responses/{id}/input_items` lists them (`listedInputItems`),
 * and how a stored response's output item becomes input again when an `item_reference` names it
 * (`outputItemAsInput`). Item shapes: `ResponseInputItem` and `ResponseItem` in the `openai`
 * client's types (resources/responses/responses.ts).
 *
 * @example
 *   inputMessages([{ type: 'message', role: 'user', text: 'Hi' }]) // [{ role: 'user', content: 'Hi' }]
 */
import type { UpstreamMessage, UpstreamToolCall } from '../chat/chat-types.js';
import { newId } from './response-output.js';

/** One input item, checked; `id` is the client's (or the stored item's), when it gave one. */
export type InputItem =
  | { type: 'message'; id?: string; role: 'user' | 'system' | 'developer' | 'assistant'; text: string }
  | { type: 'function_call'; id?: string; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; id?: string; call_id: string; output: string }
  | { type: 'mcp_call'; id: string; server_label?: string; name: string; arguments: string; output: string | null; error: string | null }
  /** An item of a stored response, by its id: resolved before the model sees the input (item-references.ts). */
  | { type: 'item_reference'; id: string };

/** Input with every `item_reference` resolved. */
export type ResolvedInputItem = Exclude<InputItem, { type: 'item_reference' }>;

/**
 * Input items → upstream messages. Calls that follow each other (function calls, gateway tool
 * runs) become one assistant turn with several tool calls, as the model made them; a gateway run's
 * result follows its turn as a tool message, a function's result (`function_call_output`) is a
 * tool message where the client put it.
 */
export function inputMessages(items: ResolvedInputItem[]): UpstreamMessage[] {
  const messages: UpstreamMessage[] = [];
  let turn: { calls: UpstreamToolCall[]; results: UpstreamMessage[] } | undefined;
  const closeTurn = () => {
    if (!turn) return;
    messages.push({ role: 'assistant', content: null, tool_calls: turn.calls }, ...turn.results);
    turn = undefined;
  };
  for (const item of items) {
    switch (item.type) {
      case 'function_call':
        turn ??= { calls: [], results: [] };
        turn.calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
        break;
      case 'mcp_call': {
        turn ??= { calls: [], results: [] };
        turn.calls.push({ id: item.id, type: 'function', function: { name: item.name, arguments: item.arguments } });
        const content =
          item.error != null ? JSON.stringify({ error: { code: 'tool_error', message: item.error } }) : (item.output ?? 'null');
        turn.results.push({ role: 'tool', tool_call_id: item.id, content });
        break;
      }
      case 'function_call_output':
        closeTurn();
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
        break;
      case 'message':
        closeTurn();
        messages.push(
          item.role === 'assistant'
            ? { role: 'assistant', content: item.text }
            : { role: item.role === 'user' ? 'user' : 'system', content: item.text },
        );
        break;
    }
  }
  closeTurn();
  return messages;
}

/** The input as `GET /v1/responses/{id}/input_items` lists it: each item whole, with an id (the client's, or one given here). */
export function listedInputItems(items: ResolvedInputItem[]): Array<Record<string, unknown>> {
  return items.map((item) => {
    switch (item.type) {
      case 'message':
        return {
          id: item.id ?? newId('msg'),
          type: 'message',
          role: item.role,
          status: 'completed',
          content: [
            item.role === 'assistant'
              ? { type: 'output_text', text: item.text, annotations: [], logprobs: [] }
              : { type: 'input_text', text: item.text },
          ],
        };
      case 'function_call':
        return {
          id: item.id ?? newId('fc'),
          type: 'function_call',
          status: 'completed',
          call_id: item.call_id,
          name: item.name,
          arguments: item.arguments,
        };
      case 'function_call_output':
        return {
          id: item.id ?? newId('fco'),
          type: 'function_call_output',
          status: 'completed',
          call_id: item.call_id,
          output: item.output,
        };
      case 'mcp_call':
        return {
          id: item.id,
          type: 'mcp_call',
          status: item.error != null ? 'failed' : 'completed',
          server_label: item.server_label ?? 'gateway',
          name: item.name,
          arguments: item.arguments,
          output: item.output,
          error: item.error,
        };
    }
  });
}

/** A stored response's output item (as JSON: nothing is assumed) as input again; undefined for a shape it cannot be. */
export function outputItemAsInput(item: Record<string, unknown>): ResolvedInputItem | undefined {
  const text = (value: unknown): value is string => typeof value === 'string';
  const id = item.id;
  if (!text(id)) return undefined;
  if (item.type === 'message' && Array.isArray(item.content)) {
    const parts = item.content as Array<{ text?: unknown }>;
    return { type: 'message', id, role: 'assistant', text: parts.map((part) => (text(part.text) ? part.text : '')).join('') };
  }
  if (item.type === 'mcp_call' && text(item.name) && text(item.arguments)) {
    return {
      type: 'mcp_call',
      id,
      ...(text(item.server_label) ? { server_label: item.server_label } : {}),
      name: item.name,
      arguments: item.arguments,
      output: text(item.output) ? item.output : null,
      error: text(item.error) ? item.error : null,
    };
  }
  if (item.type === 'function_call' && text(item.call_id) && text(item.name) && text(item.arguments)) {
    return { type: 'function_call', id, call_id: item.call_id, name: item.name, arguments: item.arguments };
  }
  return undefined;
}
