/**
 * Kept rounds in this process's memory (embedded mode): bounded to `maxEntries` and to `maxChars`
 * of values in all (the least recently put or read goes first: one answer's rounds can hold several
 * tool results of up to `chat.toolResultMaxChars` each), an entry past its TTL is never returned,
 * everything is lost at restart.
 *
 * @example
 *   const store = new MemoryKeptRounds({ maxEntries: 10_000, maxChars: config.chat.keptRoundsMaxChars })
 *   await store.put('k', '[]', 3_600_000)
 *   await store.getMany(['k']) // ['[]']
 */
import type { KeptRoundsStore } from './kept-rounds.js';

export class MemoryKeptRounds implements KeptRoundsStore {
  /** Map order is recency order: the first entry is the least recently used. */
  private readonly entries = new Map<string, { value: string; expiresAt: number }>();
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private chars = 0;

  constructor(options: { maxEntries: number; maxChars: number }) {
    this.maxEntries = options.maxEntries;
    this.maxChars = options.maxChars;
  }

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    this.remove(key);
    this.entries.set(key, { value, expiresAt: Date.now() + ttlMs });
    this.chars += value.length;
    while (this.entries.size > this.maxEntries || this.chars > this.maxChars) this.remove(this.entries.keys().next().value!);
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.chars -= entry.value.length;
  }

  async getMany(keys: string[]): Promise<Array<string | undefined>> {
    const now = Date.now();
    return keys.map((key) => {
      const entry = this.entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now) {
        this.remove(key);
        return undefined;
      }
      this.entries.delete(key); // back in as the most recently used
      this.entries.set(key, entry);
      return entry.value;
    });
  }

  /** Entries held now, expired ones included until they are read or pushed out. */
  get size(): number {
    return this.entries.size;
  }
}
