import type { Context, Next } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimited } from '../errors.js';

export interface BucketLimit {
  /** Requests allowed per window; the bucket refills to this many every `durationSec`. */
  points: number;
  durationSec: number;
}

export interface RateLimitOptions extends BucketLimit {
  /** What is limited, for the 429 message: "IP address", "wallet". */
  subject: string;
  /** The bucket key of a request; undefined skips the limit for that request. */
  keyOf(ctx: Context): string | undefined;
}

/**
 * A per-key request budget kept in memory (rate-limiter-flexible's memory limiter: a fixed window
 * per key that opens with the key's first request; refused requests count too). Over the budget
 * the request fails with 429 `rate_limited` and a `Retry-After` of the seconds until the window
 * ends. The maintained limiter is kept over a hand-rolled counter: its promise per request costs
 * a few microseconds, and the same API backs the shared Redis limiter when instances multiply.
 *
 * @example
 *   app.use(rateLimit({ subject: 'IP address', points: 1200, durationSec: 60, keyOf: (ctx) => ctx.ip }))
 */
export function rateLimit(options: RateLimitOptions) {
  const limiter = new RateLimiterMemory({ points: options.points, duration: options.durationSec });
  return async function limitRate(ctx: Context, next: Next): Promise<void> {
    const key = options.keyOf(ctx);
    if (key !== undefined) {
      try {
        await limiter.consume(key);
      } catch (rejection) {
        // The memory limiter rejects with a RateLimiterRes when over budget; anything else is a bug.
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        throw new RateLimited(
          `Rate limit exceeded for this ${options.subject}: ${options.points} requests per ${options.durationSec} s.`,
          rejection.msBeforeNext / 1000,
        );
      }
    }
    await next();
  };
}

/** Per client IP (the proxy's `X-Forwarded-For` when `server.trustProxy`); health probes are exempt. */
export function perIpRateLimit(limit: BucketLimit) {
  return rateLimit({ ...limit, subject: 'IP address', keyOf: (ctx) => (ctx.path === '/health' ? undefined : ctx.ip) });
}

/** Per wallet; runs after the wallet check, which sets `ctx.state.wallet`. */
export function perWalletRateLimit(limit: BucketLimit) {
  return rateLimit({ ...limit, subject: 'wallet', keyOf: (ctx) => ctx.state.wallet });
}
