/**
 * `item_reference` input items (`{"type": "item_reference", "id": "msg_…"}`), resolved against the
 * output items of the wallet's stored responses, as the Responses API does: the AI SDK's OpenAI
 * provider sends earlier assistant text and tool runs back so whenever `store` is on. An item the
 * wallet cannot see (unknown, expired, deleted, another wallet's, or of a `store: false` response,
 * whose items are not kept) is a 404 `item_not_found`. An item the conversation of
 * `previous_response_id` already carries is dropped, and so is a second reference to one item:
 * each is used once.
 *
 * @example
 *   const items = await resolveItemReferences(store, request.input, { wallet, carried: new Set(previous?.carried) })
 */
import { GatewayError } from '../errors.js';
import type { ResponseStore } from './response-store.js';
import { outputItemAsInput, type InputItem, type ResolvedInputItem } from './input-items.js';

export interface ResolvedInput {
  items: ResolvedInputItem[];
  /** The ids of the items the references brought in (each once). */
  referenced: string[];
}

/** The input with each reference replaced by the item it names (or dropped, when already carried or repeated). */
export async function resolveItemReferences(
  store: ResponseStore,
  input: InputItem[],
  context: { wallet: string; carried: ReadonlySet<string> },
): Promise<ResolvedInput> {
  const wanted = [...new Set(input.flatMap((item) => (item.type === 'item_reference' && !context.carried.has(item.id) ? [item.id] : [])))];
  const found = await itemsOf(store, wanted, context.wallet);
  const used = new Set<string>();
  const items: ResolvedInputItem[] = [];
  for (const item of input) {
    if (item.type !== 'item_reference') {
      items.push(item);
      continue;
    }
    if (context.carried.has(item.id) || used.has(item.id)) continue;
    used.add(item.id);
    items.push(found.get(item.id)!);
  }
  return { items, referenced: wanted };
}

/** Each of `ids` as an input item, from the stored response that holds it; the first one missing is a 404. */
async function itemsOf(store: ResponseStore, ids: string[], wallet: string): Promise<Map<string, ResolvedInputItem>> {
  const items = new Map<string, ResolvedInputItem>();
  if (ids.length === 0) return items;
  const found = await store.findItems(ids, wallet, Date.now());
  const outputs = new Map<string, Array<Record<string, unknown>>>();
  for (const id of ids) {
    const responseId = found.responseOf.get(id);
    if (responseId === undefined) throw itemNotFound(id);
    let output = outputs.get(responseId);
    if (!output) {
      output = outputOf(found.bodies.get(responseId));
      outputs.set(responseId, output);
    }
    const stored = output.find((candidate) => candidate.id === id);
    const item = stored && outputItemAsInput(stored);
    // A damaged row (or one an older release wrote differently) is as good as gone.
    if (!item) throw itemNotFound(id);
    items.set(id, item);
  }
  return items;
}

/** The output items of a stored body (stored as JSON: nothing is assumed). */
function outputOf(body: string | undefined): Array<Record<string, unknown>> {
  try {
    const output = (JSON.parse(body ?? '') as { response?: { output?: unknown } }).response?.output;
    return Array.isArray(output) ? output.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null) : [];
  } catch {
    return [];
  }
}

/** 404 as OpenAI words it, with the type of a bad request (the input named something that is not there). */
export function itemNotFound(id: string): GatewayError {
  return new GatewayError({
    status: 404,
    type: 'invalid_request_error',
    code: 'item_not_found',
    param: 'input',
    message:
      `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. ` +
      'Try again with `store` set to true, or remove this item from your input.',
  });
}
