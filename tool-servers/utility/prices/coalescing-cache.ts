import { untilAborted } from '../../kit/index.js';

export interface CoalescingCacheOptions {
  /** How long a successful answer is reused; 0 turns caching off (coalescing stays). */
  ttlMs: number;
  /** Injectable clock for tests. */
  now?: () => number;
  /** Entries kept at most; the oldest go first. */
  maxEntries?: number;
}

/**
 * Answers by key, reused for `ttlMs`, with identical concurrent requests sharing one load.
 * The shared load is not tied to any one caller's signal (one caller cancelling must not fail
 * the others); each caller still stops waiting when its own signal aborts. Failures are never
 * cached, so the next call tries the providers again.
 */
export interface CoalescingCache<T> {
  get(key: string, load: () => Promise<T>, signal: AbortSignal): Promise<T>;
}

/**
 * @example
 *   const cache = createCoalescingCache<Quote>({ ttlMs: 30_000 })
 *   const quote = await cache.get('bitcoin|usd', () => fetchQuote(), signal)
 */
export function createCoalescingCache<T>(options: CoalescingCacheOptions): CoalescingCache<T> {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 1000;
  const fresh = new Map<string, { value: T; expiresAt: number }>();
  const inFlight = new Map<string, Promise<T>>();

  const remember = (key: string, value: T) => {
    if (options.ttlMs <= 0) return;
    fresh.delete(key);
    fresh.set(key, { value, expiresAt: now() + options.ttlMs });
    while (fresh.size > maxEntries) fresh.delete(fresh.keys().next().value as string);
  };

  return {
    get(key, load, signal) {
      const cached = fresh.get(key);
      if (cached && cached.expiresAt > now()) return Promise.resolve(cached.value);
      if (cached) fresh.delete(key);
      let shared = inFlight.get(key);
      if (!shared) {
        shared = load().then(
          (value) => {
            inFlight.delete(key);
            remember(key, value);
            return value;
          },
          (err: unknown) => {
            inFlight.delete(key);
            throw err;
          },
        );
        inFlight.set(key, shared);
      }
      return untilAborted(shared, signal);
    },
  };
}
