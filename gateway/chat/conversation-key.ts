/**
 * What keeps a conversation on one deployment: the wallet and a SHA-256 of the client's messages
 * up to and including its first `user` message (at most 4 KiB of them). Every round of a chat
 * re-sends that opening, and so do a client-function continuation, a later turn and a Responses
 * request with `previous_response_id` (whose stored conversation begins with it), so all of them
 * get the same key, on every gateway instance, without a shared store. The gateway's preamble,
 * Responses `instructions` and kept rounds are not the client's messages and stay out.
 *
 * @example
 *   conversationKey('0xabc…', [{ role: 'user', content: 'What time is it in Paris?' }]) // 2719…, a uint32
 *   conversationKey('0xabc…', [{ role: 'system', content: 'Be brief.' }])              // undefined: no user message yet
 */
import { createHash } from 'node:crypto';
import type { UpstreamMessage } from './chat-types.js';

/** Bytes of the opening hashed: enough to tell conversations apart, bounded whatever the client sends. */
export const HASHED_BYTES = 4096;

/**
 * The key of the conversation `parts` (in order, e.g. a stored history then this request's
 * messages) holds, as an unsigned 32-bit number; undefined when it has no `user` message (and is
 * shorter than the bound).
 */
export function conversationKey(wallet: string, ...parts: Array<readonly UpstreamMessage[] | undefined>): number | undefined {
  let opening = '';
  let sawUser = false;
  for (const messages of parts) {
    if (!messages) continue;
    for (const m of messages) {
      opening += `${m.role}\n${m.content ?? ''}\n`;
      if (m.role === 'assistant') for (const call of m.tool_calls ?? []) opening += `${call.function.name}(${call.function.arguments})\n`;
      opening += '\u0000';
      if (m.role === 'user') {
        sawUser = true;
        break;
      }
      if (opening.length > HASHED_BYTES) break;
    }
    if (sawUser || opening.length > HASHED_BYTES) break;
  }
  // Past the bound before any user message: the first 4 KiB still open every round alike.
  if (!sawUser && opening.length <= HASHED_BYTES) return undefined;
  let bytes = Buffer.from(opening, 'utf8');
  if (bytes.length > HASHED_BYTES) bytes = bytes.subarray(0, HASHED_BYTES);
  return createHash('sha256').update(wallet.toLowerCase()).update('\n').update(bytes).digest().readUInt32BE(0);
}
