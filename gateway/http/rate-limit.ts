import type { Context, Next } from 'koa';
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
 * Per-key fixed windows kept in memory: a key's window opens with its first request and lasts
 * `durationSec`; every request in it counts, refused ones too. (The semantics of
 * rate-limiter-flexible's memory limiter, which this replaced: its promise-based `consume` and a
 * timer per key cost more than the rest of the check, on every request.)
 */
class FixedWindows {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private nextSweepAt = 0;

  constructor(
    private readonly points: number,
    private readonly durationMs: number,
  ) {}

  /** Count one request; the milliseconds until the key's window ends when it is over budget, else -1. */
  take(key: string): number {
    const now = Date.now();
    if (now >= this.nextSweepAt) this.sweep(now);
    let window = this.windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      window = { count: 0, endsAt: now + this.durationMs };
      this.windows.set(key, window);
    }
    window.count++;
    return window.count > this.points ? window.endsAt - now : -1;
  }

  /** Forget ended windows, at most once per window length, so idle keys cost no memory. */
  private sweep(now: number): void {
    this.nextSweepAt = now + this.durationMs;
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}

/**
 * A per-key request budget kept in memory. Over the budget the request fails with 429
 * `rate_limited` and a `Retry-After` of the seconds until the window ends. Synchronous: no
 * promise or timer per request.
 *
 * @example
 *   app.use(rateLimit({ subject: 'IP address', points: 1200, durationSec: 60, keyOf: (ctx) => ctx.ip }))
 */
export function rateLimit(options: RateLimitOptions) {
  const windows = new FixedWindows(options.points, options.durationSec * 1000);
  const message = `Rate limit exceeded for this ${options.subject}: ${options.points} requests per ${options.durationSec} s.`;
  return function limitRate(ctx: Context, next: Next): Promise<void> {
    const key = options.keyOf(ctx);
    if (key !== undefined) {
      const waitMs = windows.take(key);
      if (waitMs >= 0) throw new RateLimited(message, waitMs / 1000);
    }
    return next();
  };
}

/** Per client IP (the proxy's `X-Forwarded-For` when `server.trustProxy`); health probes are exempt. */
export function perIpRateLimit(limit: BucketLimit) {
  return rateLimit({ ...limit, subject: 'IP address', keyOf: (ctx) => (ctx.path === '/health' ? undefined : ctx.ip) });
}

/** Per wallet; runs after the wallet check, which sets `ctx.state.wallet`. */
export function perWalletRateLimit(limit: BucketLimit) {
  return rateLimit({ ...limit, subject: 'wallet', keyOf: (ctx) => ctx.state.wallet as string | undefined });
}
