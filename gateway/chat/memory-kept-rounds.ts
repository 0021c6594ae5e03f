/**
 * Kept rounds in this process's memory (embedded mode): bounded to `maxEntries` (the least recently
 * put or read goes first), each entry dropped once its TTL passed, everything lost at restart.
 *
 * @example
 *   const store = new MemoryKeptRounds({ maxEntries: 10_000 })
 *   await store.put('k', '[]', 3_600_000)
 *   await store.getMany(['k']) // ['[]']
 */
import type { KeptRoundsStore } from './kept-rounds.js';

export class MemoryKeptRounds implements KeptRoundsStore {
  /** Map order is recency order: the first entry is the least recently used. */
  private readonly entries = new Map<string, { value: string; expiresAt: number }>();
  private readonly maxEntries: number;

  constructor(options: { maxEntries: number; now?: () => number }) {
    this.maxEntries = options.maxEntries;
    if (options.now) this.now = options.now;
  }

  private now = (): number => Date.now();

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  async getMany(keys: string[]): Promise<Array<string | undefined>> {
    const now = this.now();
    return keys.map((key) => {
      const entry = this.entries.get(key);
      if (!entry) return undefined;
      this.entries.delete(key);
      if (entry.expiresAt <= now) return undefined;
      this.entries.set(key, entry);
      return entry.value;
    });
  }

  /** Entries held now, expired ones included until they are read or pushed out. */
  get size(): number {
    return this.entries.size;
  }
}
