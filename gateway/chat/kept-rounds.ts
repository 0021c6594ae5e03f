/**
 * Continuity across the client's round trip. A request that ends by handing the client its tool
 * calls has run rounds of the gateway's own tools the client never sees; the client sends the
 * conversation back with only the assistant message it received and its tool results. The gateway
 * keeps what the model saw in place of that assistant message (its own rounds, and the round's
 * assistant message with every call, followed by the gateway calls' results), keyed by the wallet
 * and the client call ids it returned, for `chat.keptRoundsTtlMs`. A later request of the same
 * wallet carrying an assistant message with exactly those ids gets them spliced back in place.
 * Missing (expired, or a store that is down): the conversation goes up as the client sent it,
 * which is whole on its own (every call in it has its result), and a log line says so.
 *
 * @example
 *   const kept = new KeptRounds(store, { ttlMs: 3_600_000, logger })
 *   const messages = await kept.restore(wallet, request.messages)
 *   await kept.keep(wallet, ['call_abc…'], roundsOfThisRequest)
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../logger.js';
import type { UpstreamMessage } from './chat-types.js';
import { assistantMessageSchema, toolMessageSchema } from './stored-messages.js';

/**
 * Where kept rounds live: memory (embedded mode), Redis (cluster mode) or PostgreSQL (DATABASE_URL
 * alone). Values are opaque text; each expires `ttlMs` after it was put and is never returned after.
 * Each store holds at most `chat.keptRoundsMaxChars` of values in all, dropping the oldest first,
 * so callers rotating wallet headers (free mode) cannot fill the memory, Redis or the database.
 */
export interface KeptRoundsStore {
  put(key: string, value: string, ttlMs: number): Promise<void>;
  /** The live value of each key, in order (undefined: none, or expired). */
  getMany(keys: string[]): Promise<Array<string | undefined>>;
}

/** A kept round is the model's turn and the results of its calls: nothing else may come back. */
const keptMessages = z.array(z.union([assistantMessageSchema, toolMessageSchema]));

export class KeptRounds {
  constructor(
    private readonly store: KeptRoundsStore,
    private readonly options: { ttlMs: number; logger: Logger },
  ) {}

  /**
   * Keep `messages` (what replaces the returned assistant message) for the client calls `callIds`.
   * A store failure is logged, not thrown: the answer is ready, and the continuation still works.
   */
  async keep(wallet: string, callIds: string[], messages: UpstreamMessage[]): Promise<void> {
    try {
      await this.store.put(keptRoundsKey(wallet, callIds), JSON.stringify(messages), this.options.ttlMs);
    } catch (err) {
      this.options.logger.warn({ err, callIds }, 'keeping the gateway rounds failed: the continuation will not see them');
    }
  }

  /** The conversation with the kept rounds back in place of each assistant message they belong to. */
  async restore(wallet: string, messages: UpstreamMessage[]): Promise<UpstreamMessage[]> {
    const positions: number[] = [];
    const keys: string[] = [];
    messages.forEach((m, i) => {
      if (m.role !== 'assistant' || !m.tool_calls?.length) return;
      positions.push(i);
      keys.push(
        keptRoundsKey(
          wallet,
          m.tool_calls.map((c) => c.id),
        ),
      );
    });
    if (keys.length === 0) return messages;
    let found: Array<string | undefined>;
    try {
      found = await this.store.getMany(keys);
    } catch (err) {
      this.options.logger.warn({ err }, 'kept gateway rounds could not be read: the conversation goes up as sent');
      return messages;
    }
    const restored = [...messages];
    const missing: string[] = [];
    // From the end, so earlier positions stay valid as splices change the length.
    for (let k = positions.length - 1; k >= 0; k--) {
      const kept = this.parse(found[k]);
      const at = positions[k];
      if (kept) restored.splice(at, 1, ...kept);
      else missing.unshift(...(messages[at] as { tool_calls: Array<{ id: string }> }).tool_calls.map((c) => c.id));
    }
    if (missing.length) {
      this.options.logger.info(
        { callIds: missing },
        'no kept gateway rounds for these tool calls (expired, or not returned by this gateway): the conversation goes up as sent',
      );
    }
    return restored;
  }

  private parse(value: string | undefined): UpstreamMessage[] | undefined {
    if (value === undefined) return undefined;
    try {
      const parsed = keptMessages.safeParse(JSON.parse(value));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: reported below
    }
    this.options.logger.warn('kept gateway rounds are unreadable: the conversation goes up as sent');
    return undefined;
  }
}

/** The wallet and the call ids (in any order), hashed: no wallet or id appears in a store's keys. */
export function keptRoundsKey(wallet: string, callIds: string[]): string {
  return createHash('sha256')
    .update(`${wallet.toLowerCase()}\n${[...callIds].sort().join('\n')}`)
    .digest('hex');
}
