/**
 * The per-wallet chat concurrency cap across every instance: each running chat holds a lease in
 * Redis (a sorted set per wallet, lease id scored by its expiry). Taking one is a Lua script —
 * drop expired leases, count, add — atomic in Redis. Leases live LEASE_TTL_MS and this instance
 * renews the ones it holds every third of that, so a killed instance frees its slots within the
 * TTL instead of leaking them.
 *
 * @example
 *   const leases = new ChatLeases(redis)
 *   const release = await leases.acquire(wallet, 8)   // undefined: 8 chats already run for it
 *   release?.()
 */
import { idSequence } from '../../id-sequence.js';
import { redisGuarded, type SharedRedis } from './shared-redis.js';

const LEASE_TTL_MS = 15_000;

// KEYS: the wallet's set. ARGV: now, expiry, lease id, cap, ttl.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

export class ChatLeases {
  /** Leases this instance holds: id → the wallet set's key. */
  private readonly held = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;
  private readonly nextLeaseId = idSequence('');

  constructor(
    private readonly redis: SharedRedis,
    private readonly ttlMs = LEASE_TTL_MS,
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(10, Math.floor(ttlMs / 3)));
    this.timer.unref();
  }

  async acquire(wallet: string, cap: number): Promise<(() => void) | undefined> {
    const key = this.redis.key(`chat:${wallet}`);
    const id = this.nextLeaseId();
    const now = Date.now();
    const taken = await redisGuarded(() => this.redis.client.eval(ACQUIRE, 1, key, now, now + this.ttlMs, id, cap, this.ttlMs));
    if (taken !== 1) return undefined;
    this.held.set(id, key);
    return () => {
      if (!this.held.delete(id)) return;
      // A release that fails is left to the lease's TTL.
      this.redis.client.zrem(key, id).catch(() => {});
    };
  }

  /** Stop renewing (shutdown): leases still held expire by their TTL. */
  stop(): void {
    clearInterval(this.timer);
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0 || !this.redis.up()) return;
    const expiry = Date.now() + this.ttlMs;
    const pipeline = this.redis.client.pipeline();
    for (const [id, key] of this.held) {
      pipeline.zadd(key, 'XX', expiry, id);
      pipeline.pexpire(key, this.ttlMs);
    }
    await pipeline.exec().catch(() => {});
  }
}
