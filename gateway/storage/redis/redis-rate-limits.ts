/**
 * Request budgets shared by every instance: rate-limiter-flexible's Redis limiter, so a wallet
 * allowed N requests per window gets N across the cluster, not N per instance. While Redis is
 * unreachable each limiter falls back to its insurance limiter, a per-instance memory budget of
 * the same size (the cluster then admits up to N per instance until Redis returns).
 *
 * @example
 *   app.use(perWalletRateLimit(config.limits.perWallet, redisLimiters(redis)))
 */
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { SharedRedis } from './shared-redis.js';

export function redisLimiters(redis: SharedRedis) {
  return (name: string, limit: { points: number; durationSec: number }) =>
    new RateLimiterRedis({
      storeClient: redis.client,
      keyPrefix: redis.key(`limit:${name}`),
      points: limit.points,
      duration: limit.durationSec,
      // Not ready → the insurance limiter at once, instead of a command that can only fail.
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ points: limit.points, duration: limit.durationSec }),
    });
}
