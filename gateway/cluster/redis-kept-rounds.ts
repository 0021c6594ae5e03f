/**
 * Kept rounds in Redis (cluster mode with REDIS_URL): one string key per kept answer under
 * REDIS_PREFIX, expiring by itself (PX), so any instance serves the client's continuation and
 * nothing needs sweeping. Redis unreachable → StoreUnavailable, which the chat loop logs and
 * goes on without (see chat/kept-rounds.ts).
 *
 * @example
 *   const store = new RedisKeptRounds(redis)
 *   await store.put(key, json, 3_600_000)
 *   await store.getMany([key]) // [json], on any instance, until it expires
 */
import { redisGuarded, type SharedRedis } from './shared-redis.js';

export class RedisKeptRounds {
  constructor(private readonly redis: SharedRedis) {}

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    await redisGuarded(() => this.redis.client.set(this.keyOf(key), value, 'PX', ttlMs));
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
