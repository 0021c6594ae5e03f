import type { Context, Next } from 'koa';
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimited } from '../../errors.js';
import { startCheck } from './admission.js';

export interface BucketLimit {
  /** Requests allowed per window; the bucket refills to this many every `durationSec`. */
  points: number;
  durationSec: number;
}

/**
 * Where a budget's counters live: this process's memory (the default), or a store every instance
 * shares (cluster mode: Redis, see storage/redis/redis-rate-limits.ts). `name` keeps budgets apart.
 */
export type LimiterFactory = (name: string, limit: BucketLimit) => RateLimiterAbstract;

export const memoryLimiters: LimiterFactory = (_name, limit) =>
  new RateLimiterMemory({ points: limit.points, duration: limit.durationSec });

export interface RateLimitOptions extends BucketLimit {
  /** What is limited, for the 429 message: "IP address", "wallet". */
  subject: string;
  /** The bucket key of a request; undefined skips the limit for that request. */
  keyOf(ctx: Context): string | undefined;
  /** The counters; default a memory limiter. */
  limiter?: RateLimiterAbstract;
  /**
   * Whether a gate further on decides this request's check (http/middleware/admission.ts), so the request
   * goes on while the check runs; otherwise the check is decided before it goes on. Default: yes.
   */
  decidedAtGate?(ctx: Context): boolean;
}

/**
 * A per-key request budget kept in memory (rate-limiter-flexible's memory limiter: a fixed window
 * per key that opens with the key's first request; refused requests count too). Over the budget
 * the request fails with 429 `rate_limited` and a `Retry-After` of the seconds until the window
 * ends. The maintained limiter is kept over a hand-rolled counter: its promise per request costs
 * a few microseconds, and the same API backs the shared Redis limiter when instances multiply.
 *
 * The check starts here and is decided at the route's gate (http/middleware/admission.ts), beside the
 * request's other checks. A request that fails after its check started answers 429 all the same
 * when over budget, and a route without a gate (health, the pages) is answered 429 here.
 *
 * @example
 *   app.use(rateLimit({ subject: 'IP address', points: 1200, durationSec: 60, keyOf: (ctx) => ctx.ip }))
 */
export function rateLimit(options: RateLimitOptions) {
  const limiter = options.limiter ?? memoryLimiters('', options);
  const refused = (rejection: unknown): never => {
    // Limiters reject with a RateLimiterRes when over budget (the Redis one falls back to its
    // in-memory insurance when Redis fails); anything else is a bug.
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw new RateLimited(
      `Rate limit exceeded for this ${options.subject}: ${options.points} requests per ${options.durationSec} s.`,
      rejection.msBeforeNext / 1000,
    );
  };
  return async function limitRate(ctx: Context, next: Next): Promise<void> {
    const key = options.keyOf(ctx);
    if (key === undefined) return next();
    const verdict = limiter.consume(key).catch(refused);
    if (options.decidedAtGate?.(ctx) === false) await verdict;
    else startCheck(ctx, verdict);
    try {
      await next();
    } finally {
      await verdict; // over budget, the answer is 429 whatever happened after the check started
    }
  };
}

/** Paths the per-IP budget leaves alone: load balancers' health probes. */
export const OUTSIDE_IP_BUDGET: readonly string[] = ['/health'];

/**
 * Per client IP (the proxy's `X-Forwarded-For` when `server.trustProxy`); health probes are
 * exempt. A POST naming a wallet is headed for a route with a gate (chat, responses, tool
 * execution, MCP, key minting), so its check runs beside the wallet's; anything else (the pages,
 * metrics, admin, every GET) is decided before it goes on, as it was before there were gates.
 */
export function perIpRateLimit(limit: BucketLimit, limiters: LimiterFactory = memoryLimiters) {
  return rateLimit({
    ...limit,
    subject: 'IP address',
    keyOf: (ctx) => (OUTSIDE_IP_BUDGET.includes(ctx.path) ? undefined : ctx.ip),
    limiter: limiters('ip', limit),
    decidedAtGate: (ctx) => ctx.method === 'POST' && ctx.get('x-wallet-address') !== '',
  });
}

/** Per wallet; runs after the wallet check, which sets `ctx.state.wallet`. */
export function perWalletRateLimit(limit: BucketLimit, limiters: LimiterFactory = memoryLimiters) {
  return rateLimit({ ...limit, subject: 'wallet', keyOf: (ctx) => ctx.state.wallet, limiter: limiters('wallet', limit) });
}
