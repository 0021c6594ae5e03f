/**
 * A small TTL cache with in-flight sharing: identical concurrent reads share one RPC request, and
 * a finished value is kept for its TTL (long for immutable data, at most one block time for data
 * that moves). Failures are never cached, so a dead RPC is retried on the next call.
 */
export interface ReadCacheOptions {
  /** Entries kept at most (default DEFAULT_MAX_ENTRIES); the oldest go first. */
  maxEntries?: number;
  now?: () => number;
}

export interface ReadCacheStats {
  hits: number;
  misses: number;
  shared: number;
}

export class ReadCache {
  private readonly values = new Map<string, { value: unknown; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  readonly stats: ReadCacheStats = { hits: 0, misses: 0, shared: 0 };

  constructor(options: ReadCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.now = options.now ?? Date.now;
  }

  /**
   * The cached value for `key`, or the result of `load()` shared by every concurrent caller and
   * kept `ttlMs` (0 = share in flight only).
   *
   * @example
   *   const balance = await cache.get(`1:balance:${address}`, 12_000, () => client.getBalance({ address }))
   */
  async get<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const stored = this.values.get(key);
    if (stored && stored.expiresAt > this.now()) {
      this.stats.hits++;
      return stored.value as T;
    }
    if (stored) this.values.delete(key);
    const pending = this.inFlight.get(key);
    if (pending) {
      this.stats.shared++;
      return pending as Promise<T>;
    }
    this.stats.misses++;
    const promise = load().then(
      (value) => {
        this.inFlight.delete(key);
        if (ttlMs > 0) this.store(key, value, ttlMs);
        return value;
      },
      (err: unknown) => {
        this.inFlight.delete(key);
        throw err;
      },
    );
    this.inFlight.set(key, promise);
    return promise;
  }

  /** Put a value in directly (e.g. a block fetched by number is also known by its hash). */
  set(key: string, value: unknown, ttlMs: number): void {
    if (ttlMs > 0) this.store(key, value, ttlMs);
  }

  /** A stored, unexpired value, without loading. */
  peek<T>(key: string): T | undefined {
    const stored = this.values.get(key);
    return stored && stored.expiresAt > this.now() ? (stored.value as T) : undefined;
  }

  get size(): number {
    return this.values.size;
  }

  private store(key: string, value: unknown, ttlMs: number): void {
    this.values.delete(key);
    this.values.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.values.size > this.maxEntries) {
      const oldest = this.values.keys().next().value as string;
      this.values.delete(oldest);
    }
  }
}

/**
 * Entries are tool outputs or small values (under ~1 KiB each, never a raw block with its
 * transaction list), so the cache stays within a few MiB.
 */
export const DEFAULT_MAX_ENTRIES = 5_000;

/** Immutable data (token metadata, a block by hash, a mined transaction): kept for a day. */
export const IMMUTABLE_TTL_MS = 24 * 60 * 60 * 1000;
