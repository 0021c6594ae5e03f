/**
 * What is kept of a stored response: the response object as `GET /v1/responses/{id}` returns it,
 * and the whole conversation as the model saw it (earlier turns, this turn's input, each gateway
 * tool round, the answer) — `previous_response_id` continues from exactly that. The instructions
 * are not part of it: as in the Responses API, they apply to one response only. Beside them, this
 * turn's input items as `GET /v1/responses/{id}/input_items` lists them, and the ids of every item
 * the conversation carries (its own output's, the items its input referenced, and those of the
 * response it continued), so an item both referenced and carried by `previous_response_id` is
 * used once. The output items are indexed by the store (`ResponseStore.findItems`).
 *
 * @example
 *   await keepResponse(store, { id, wallet, ttlMs, response, conversation, input, carried })
 *   const earlier = await loadResponse(store, id, wallet)   // 404 for any other wallet
 */
import { z } from 'zod';
import { echoed, InvalidRequest, NotFound } from '../errors.js';
import type { ResponseStore } from './response-store.js';
import type { UpstreamMessage } from '../chat/chat-types.js';
import { unpairedTool } from '../chat/tool-pairing.js';
import { upstreamMessageSchema } from '../chat/stored-messages.js';

const storedBody = z.object({
  response: z.record(z.string(), z.unknown()),
  conversation: z.array(upstreamMessageSchema),
  // Absent from responses stored by releases before input items were kept.
  input: z.array(z.record(z.string(), z.unknown())).default([]),
  carried: z.array(z.string()).default([]),
});

export type StoredBody = z.infer<typeof storedBody>;

/**
 * Store a finished response for `ttlMs`, its output items indexed; false when it alone is over the
 * wallet's byte quota. `carried`: the ids of the items its conversation holds besides its own output.
 */
export async function keepResponse(
  store: ResponseStore,
  record: {
    id: string;
    wallet: string;
    ttlMs: number;
    response: Record<string, unknown>;
    conversation: UpstreamMessage[];
    input: Array<Record<string, unknown>>;
    carried: string[];
  },
): Promise<boolean> {
  const now = Date.now();
  const output = Array.isArray(record.response.output) ? (record.response.output as Array<{ id?: unknown }>) : [];
  const itemIds = output.flatMap((item) => (typeof item.id === 'string' ? [item.id] : []));
  const carried = [...new Set([...record.carried, ...itemIds])];
  const body = JSON.stringify({ response: record.response, conversation: record.conversation, input: record.input, carried });
  return store.put({ id: record.id, wallet: record.wallet, createdAt: now, expiresAt: now + record.ttlMs, body, itemIds });
}

/** The wallet's stored response `id`; 404 when it has none (another wallet's, deleted, expired). */
export async function loadResponse(store: ResponseStore, id: string, wallet: string, param: string | null = null): Promise<StoredBody> {
  const body = await store.get(id, wallet, Date.now());
  if (body === undefined) throw responseNotFound(id, param);
  // A damaged row (or one an older release wrote differently) is as good as gone: 404, not 500.
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw responseNotFound(id, param);
  }
  const stored = storedBody.safeParse(parsed);
  if (!stored.success) throw responseNotFound(id, param);
  return stored.data;
}

export function responseNotFound(id: string, param: string | null = null): NotFound {
  return new NotFound(`Response with id '${echoed(id)}' not found.`, 'response_not_found', param);
}

/**
 * A stored response that handed the client function calls continues only with their outputs: each
 * call still without a result must get a `function_call_output` in the new input, and each output
 * must answer a call of the stored conversation or of the input (as the Responses API requires),
 * or the model would see a call with no result, or a result of no call.
 */
export function assertCallsAnswered(earlier: UpstreamMessage[], input: UpstreamMessage[]): void {
  const unpaired = unpairedTool([...earlier, ...input]);
  if (unpaired?.kind === 'call_without_result') throw new InvalidRequest(`No tool output found for function call ${unpaired.id}.`, 'input');
  if (unpaired) throw new InvalidRequest(`No tool call found for function call output with call_id ${unpaired.id}.`, 'input');
}

/**
 * This turn's input less what a client echoed from the stored response (`input.push(...response.output)`):
 * its calls and their results are in the stored conversation already (the gateway's own under the
 * upstream's ids, where the echo carries the `mcp_…` item ids), and so is its text. Sent twice, the
 * model would see a call again, the second time without its result, and text repeated between a
 * call and its result.
 */
export function withoutEchoes(earlier: StoredBody, input: UpstreamMessage[]): UpstreamMessage[] {
  const { calls, results } = callsAndResults(earlier.conversation);
  const output = Array.isArray(earlier.response.output) ? (earlier.response.output as OutputItemShape[]) : [];
  /** The output's message texts, each echo removing one. */
  const texts: string[] = [];
  for (const item of output) {
    if (item.type === 'mcp_call' && typeof item.id === 'string') {
      calls.add(item.id);
      results.add(item.id);
    }
    if (item.type === 'message' && Array.isArray(item.content))
      texts.push(item.content.map((part) => (typeof part.text === 'string' ? part.text : '')).join(''));
  }
  return input.filter((m) => {
    if (m.role === 'assistant' && m.tool_calls?.length) return !m.tool_calls.every((call) => calls.has(call.id));
    if (m.role === 'assistant') {
      const echoed = texts.indexOf(m.content ?? '');
      if (echoed !== -1) texts.splice(echoed, 1);
      return echoed === -1;
    }
    if (m.role === 'tool') return !results.has(m.tool_call_id);
    return true;
  });
}

/** What withoutEchoes reads of a stored output item (stored as JSON: nothing is assumed). */
interface OutputItemShape {
  type?: unknown;
  id?: unknown;
  content?: Array<{ text?: unknown }>;
}

/** The ids of a conversation's tool calls, and of the calls that have their result. */
function callsAndResults(conversation: UpstreamMessage[]): { calls: Set<string>; results: Set<string> } {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const m of conversation) {
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) calls.add(call.id);
    if (m.role === 'tool') results.add(m.tool_call_id);
  }
  return { calls, results };
}
