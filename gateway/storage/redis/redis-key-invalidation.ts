/**
 * Every instance's key cache (ApiKeys) stays honest when keys change elsewhere:
 * - creation, revocation and a change of limits through this instance are published on Redis
 *   (`<prefix>keys`), and each other instance drops that hash at once (a revoked key is refused,
 *   and changed limits apply, everywhere well within 1 s);
 * - when Redis comes back after an outage (messages may have been missed) the cache is emptied;
 * - whatever happens to Redis, the whole cache is emptied every 25 s (under the 30 s promise; 5 s
 *   without Redis), so each key in use is read from PostgreSQL again.
 *
 * @example
 *   const stop = await keepKeyCachesHonest(apiKeys, { redis })   // StoreUnavailable naming Redis if it cannot subscribe
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Redis } from 'ioredis';
import type { ApiKeys, KeyChange } from '../../keys/api-keys.js';
import { StoreUnavailable } from '../../errors.js';
import type { SharedRedis } from './shared-redis.js';

/** With Redis broadcasting changes, the re-check is only the safety net. */
const RECHECK_WITH_REDIS_MS = 25_000;
/** Without Redis the re-check is the only way another instance's revocation arrives. */
const RECHECK_WITHOUT_REDIS_MS = 5_000;

const messageSchema = z.object({
  kind: z.enum(['created', 'revoked', 'changed']),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  from: z.string(),
});

export async function keepKeyCachesHonest<L>(
  apiKeys: ApiKeys<L>,
  options: { redis?: SharedRedis; onError?: (err: unknown) => void },
): Promise<{ stop(): void }> {
  const recheckMs = options.redis ? RECHECK_WITH_REDIS_MS : RECHECK_WITHOUT_REDIS_MS;
  const timer = setInterval(() => apiKeys.clear(), recheckMs);
  timer.unref();
  const { redis } = options;
  if (!redis) return { stop: () => clearInterval(timer) };

  const me = randomBytes(8).toString('hex');
  const channel = redis.key('keys');
  const subscriber: Redis = redis.duplicate();
  subscriber.on('message', (_channel: string, text: string) => {
    let parsed;
    try {
      parsed = messageSchema.safeParse(JSON.parse(text));
    } catch {
      return; // not JSON: not ours
    }
    if (parsed.success && parsed.data.from !== me) apiKeys.forget(parsed.data.hash);
  });
  // Either connection coming back may have missed messages: start again from PostgreSQL.
  let subscriberLost = false;
  subscriber.on('close', () => (subscriberLost = true));
  subscriber.on('ready', () => {
    if (subscriberLost) apiKeys.clear();
    subscriberLost = false;
  });
  redis.onReturn(() => apiKeys.clear());
  try {
    await subscriber.connect();
    await subscriber.subscribe(channel);
  } catch (err) {
    clearInterval(timer);
    subscriber.disconnect();
    throw new StoreUnavailable('Redis', err, `Redis did not take the key broadcast subscription: ${(err as Error).message}`);
  }

  apiKeys.onChange((change: KeyChange) => {
    // A lost broadcast is covered by the re-check (and the clear when Redis returns).
    redis.client.publish(channel, JSON.stringify({ ...change, from: me })).catch((err: unknown) => options.onError?.(err));
  });
  return {
    stop() {
      clearInterval(timer);
      subscriber.disconnect();
    },
  };
}
