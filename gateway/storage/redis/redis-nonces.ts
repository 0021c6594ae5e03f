/**
 * SIWE nonces shared by every instance, in Redis: a nonce issued by one gateway is accepted once
 * by any other, and never twice — consuming is one Lua script (compare the wallet, then delete),
 * atomic in Redis. Each nonce key expires by itself (PX); a wallet keeps at most `perWallet`
 * outstanding (a list, oldest evicted first), as the in-memory NonceStore does.
 * Redis unreachable → StoreUnavailable (503 `store_unavailable`) on issue and on use.
 *
 * @example
 *   const nonces = new RedisNonces(redis, { ttlMs: 600_000 })
 *   const { nonce } = await nonces.issue(wallet)
 *   await nonces.consume(nonce, wallet)   // true once, then false, on any instance
 */
import { generateSiweNonce } from 'viem/siwe';
import type { Nonces } from '../../keys/siwe.js';
import { redisGuarded, type SharedRedis } from './shared-redis.js';

/** Same bound as the in-memory store (keys/nonce-store.ts). */
const NONCES_PER_WALLET = 5;

// KEYS: the wallet's list (oldest first), the new nonce's key. ARGV: nonce-key prefix, nonce, wallet, ttl, cap.
// Every nonce lives the same TTL, so the list's order is expiry order: expired ones go first.
const ISSUE = `
while redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[5]) do
  redis.call('DEL', ARGV[1] .. redis.call('LPOP', KEYS[1]))
end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

// KEYS: the nonce's key, the wallet's list. ARGV: wallet, nonce.
const CONSUME = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('LREM', KEYS[2], 1, ARGV[2])
return 1`;

export class RedisNonces implements Nonces {
  private readonly ttlMs: number;
  private readonly perWallet: number;

  constructor(
    private readonly redis: SharedRedis,
    options: { ttlMs: number; perWallet?: number },
  ) {
    this.ttlMs = options.ttlMs;
    this.perWallet = options.perWallet ?? NONCES_PER_WALLET;
  }

  async issue(wallet: string): Promise<{ nonce: string; expiresAt: number }> {
    const nonce = generateSiweNonce();
    const expiresAt = Date.now() + this.ttlMs;
    const prefix = this.redis.key('nonce:');
    const keys = [this.walletList(wallet), prefix + nonce];
    await redisGuarded(() => this.redis.client.eval(ISSUE, keys.length, ...keys, prefix, nonce, wallet, this.ttlMs, this.perWallet));
    return { nonce, expiresAt };
  }

  async consume(nonce: string, wallet: string): Promise<boolean> {
    const keys = [this.redis.key(`nonce:${nonce}`), this.walletList(wallet)];
    const spent = await redisGuarded(() => this.redis.client.eval(CONSUME, keys.length, ...keys, wallet, nonce));
    return spent === 1;
  }

  private walletList(wallet: string): string {
    return this.redis.key(`nonces:${wallet}`);
  }
}
