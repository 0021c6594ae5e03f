/**
 * One round of the model's tool calls when the client brought functions of its own: each call is
 * either the gateway's to run or the client's to receive. Call ids are made fit to hand out
 * first: a client keys its results by them and the gateway keys the rounds it keeps by them, so
 * an id that is missing, short or already used gets a fresh `call_<random>` one, and so does every
 * call handed to the client: some upstreams number their ids (`functions.read_file:0`), and two
 * conversations of one wallet must never share the key of their kept rounds.
 *
 * @example
 *   const calls = withUsableCallIds(round.toolCalls, usedIds, clientTools.names)
 *   const { gateway, client } = splitToolCalls(calls, clientTools.names, { parallel: clientTools.parallel })
 *   // run `gateway`, then hand `client` back with finish_reason "tool_calls" (when non-empty)
 */
import { randomBytes } from 'node:crypto';
import type { UpstreamMessage, UpstreamToolCall } from './chat-types.js';

/** Shorter upstream ids (`call_0`, `0`) repeat across rounds and requests; Mistral's 9-character ids pass. */
const MIN_ID_LENGTH = 8;
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface SplitRound {
  /** The round's calls in the model's order, less any client call dropped by `parallel: false`. */
  calls: UpstreamToolCall[];
  /** Calls the gateway runs: its own tools, and names nobody offered (they get an error result). */
  gateway: UpstreamToolCall[];
  /** Calls of the client's functions, in the model's order. */
  client: UpstreamToolCall[];
}

/**
 * Split a round's calls by whose they are. With `parallel: false` the client receives only the
 * first of its calls (the model was asked for one; an upstream that ignored that does not make the
 * client run two); the others are dropped from the round, so no call is left without a result.
 */
export function splitToolCalls(
  calls: UpstreamToolCall[],
  clientNames: ReadonlySet<string>,
  options: { parallel?: boolean } = {},
): SplitRound {
  const split: SplitRound = { calls: [], gateway: [], client: [] };
  for (const call of calls) {
    if (!clientNames.has(call.function.name)) split.gateway.push(call);
    else if (options.parallel !== false || split.client.length === 0) split.client.push(call);
    else continue;
    split.calls.push(call);
  }
  return split;
}

/**
 * The round's calls with every missing, short or repeated id replaced, and every call of a client
 * function (`clientNames`) given a fresh one; `used` gains the ids handed out.
 */
export function withUsableCallIds(
  calls: UpstreamToolCall[],
  used: Set<string>,
  clientNames: ReadonlySet<string> = new Set(),
): UpstreamToolCall[] {
  return calls.map((call) => {
    const keep = call.id.length >= MIN_ID_LENGTH && !used.has(call.id) && !clientNames.has(call.function.name);
    const id = keep ? call.id : freshCallId(used);
    used.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

/** Every tool-call id a conversation already holds. */
export function callIdsIn(messages: UpstreamMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) ids.add(call.id);
    else if (m.role === 'tool') ids.add(m.tool_call_id);
  }
  return ids;
}

/** `call_` and 24 random letters and digits, the shape of OpenAI's own ids. */
function freshCallId(used: Set<string>): string {
  for (;;) {
    const bytes = randomBytes(24);
    let id = 'call_';
    for (const byte of bytes) id += ID_ALPHABET[byte % ID_ALPHABET.length];
    if (!used.has(id)) return id;
  }
}
