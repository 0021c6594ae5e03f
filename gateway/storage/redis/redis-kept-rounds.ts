/**
 * Kept rounds in Redis (cluster mode with REDIS_URL): one string key per kept answer under
 * REDIS_PREFIX, expiring by itself (PX), so any instance serves the client's continuation.
 * Bounded: an index of the live keys by expiry and their sizes lets each put drop the oldest until
 * the values held fit `maxBytes` (one Lua script, atomic across instances), so callers rotating
 * wallet headers cannot fill Redis, whose memory the limits, leases and nonces share. Redis
 * unreachable → StoreUnavailable, which the chat loop logs and goes on without (see
 * chat/kept-rounds.ts).
 *
 * @example
 *   const store = new RedisKeptRounds(redis, { maxBytes: 64 * 1024 * 1024 })
 *   await store.put(key, json, 3_600_000)
 *   await store.getMany([key]) // [json], on any instance, until it expires or is pushed out
 */
import type { KeptRoundsStore } from '../../chat/kept-rounds.js';
import { redisGuarded, type SharedRedis } from './shared-redis.js';

// KEYS: the entry, the index (sorted set: entry key → expiry), the sizes (hash: entry key → bytes),
// the total (string). ARGV: value, ttl ms, now ms, max bytes. Entries named by the index are keys
// of this prefix too (a single Redis, not a cluster: the script touches keys it was not handed).
const PUT = `
local function forget(key)
  local size = redis.call('HGET', KEYS[3], key)
  if size then
    redis.call('DECRBY', KEYS[4], size)
    redis.call('HDEL', KEYS[3], key)
  end
  redis.call('ZREM', KEYS[2], key)
end
local now = tonumber(ARGV[3])
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do forget(key) end
forget(KEYS[1])
local size = string.len(ARGV[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
local total = redis.call('INCRBY', KEYS[4], size)
while total > tonumber(ARGV[4]) do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not oldest then break end
  forget(oldest)
  redis.call('DEL', oldest)
  total = tonumber(redis.call('GET', KEYS[4]))
end
return total`;

export class RedisKeptRounds implements KeptRoundsStore {
  constructor(
    private readonly redis: SharedRedis,
    /** The values held at most, in bytes (`chat.keptRoundsMaxChars`). */
    private readonly options: { maxBytes: number },
  ) {}

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    const keys = [
      this.keyOf(key),
      this.redis.key('kept-rounds-index'),
      this.redis.key('kept-rounds-sizes'),
      this.redis.key('kept-rounds-bytes'),
    ];
    await redisGuarded(() => this.redis.client.eval(PUT, keys.length, ...keys, value, ttlMs, Date.now(), this.options.maxBytes));
  }

  async getMany(keys: string[]): Promise<Array<string | undefined>> {
    if (keys.length === 0) return [];
    const values = await redisGuarded(() => this.redis.client.mget(...keys.map((key) => this.keyOf(key))));
    return values.map((value) => value ?? undefined);
  }

  private keyOf(key: string): string {
    return this.redis.key(`kept-rounds:${key}`);
  }
}
