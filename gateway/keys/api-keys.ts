/**
 * API keys: `sy_` + base64url(32 random bytes), shown once. Only the SHA-256 hex is stored (in a
 * `KeyStore`), with name, address, created_at, last_used_at and whether a wallet-ownership proof
 * minted it.
 *
 * Keys are read from memory: a bounded LRU of key hash → record, filled on first use. Creation and
 * revocation go through here and drop the hash at once, and an unknown key is never cached, so a
 * key minted a moment ago works at once. In embedded mode one process owns the store (the
 * DATA_DIR lock), so the cache is exact. With several processes on one store, another instance's
 * revocation reaches this cache through `forget`/`clear` (cluster mode wires that).
 *
 * A key's limits are not in its record: they live with the ledger (ledger/key-budgets.ts). The
 * cache holds them beside the record, read through `limitsOf` when the record is read, so a change
 * of limits travels as a revocation does (`limitsChanged` drops the hash here and broadcasts it).
 * `L` is the limits' type, which keys/ does not need to know.
 *
 * @example
 *   const keys = new ApiKeys(new KeyvKeyStore(store.keys))
 *   const { key } = await keys.create({ address, name: 'laptop', verified: true })
 *   const record = await keys.find(key)   // undefined when unknown or revoked
 */
import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ApiKeyRecord, KeyStore } from './key-store.js';

export type { ApiKeyRecord } from './key-store.js';

export const KEY_PREFIX = 'sy_';
/** A key as it appears in `Authorization: Bearer …`: the prefix and exactly 43 base64url chars. */
export const KEY_PATTERN = /^sy_[A-Za-z0-9_-]{43}$/;
/** last_used_at is written at most this often per key (a write per request would dominate). */
const TOUCH_INTERVAL_MS = 60_000;
/** Key records kept in memory; the least recently used goes first. */
const DEFAULT_CACHE_SIZE = 10_000;

/** What GET /auth/api-keys shows: never the key, never its hash. */
export type ApiKeyListing = Omit<ApiKeyRecord, 'address'>;

/** A key as the cache holds it: its record and, when it has any, its limits. */
export type KnownKey<L> = ApiKeyRecord & { limits?: L };

/** A change other copies of the key cache must hear about (cluster mode broadcasts it). */
export interface KeyChange {
  kind: 'created' | 'revoked' | 'changed';
  hash: string;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export class ApiKeys<L = never> {
  private readonly now: () => number;
  /** Hash → record (and limits), the least recently used dropped first. */
  private readonly cache: LRUCache<string, KnownKey<L>>;
  private readonly limitsOf: ((keyId: string) => Promise<L | undefined>) | undefined;
  /** Bumped by every forget, clear and change: a store read that straddles one is not cached. */
  private generation = 0;
  private readonly listeners: Array<(change: KeyChange) => void> = [];
  private readonly onTouchError: (err: unknown) => void;

  constructor(
    private readonly store: KeyStore,
    options: {
      now?: () => number;
      cacheSize?: number;
      onTouchError?: (err: unknown) => void;
      /** A key's limits, read with its record (undefined: none). */
      limitsOf?: (keyId: string) => Promise<L | undefined>;
    } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.limitsOf = options.limitsOf;
    this.cache = new LRUCache({ max: options.cacheSize ?? DEFAULT_CACHE_SIZE });
    this.onTouchError = options.onTouchError ?? (() => {});
  }

  /**
   * Mint a key for `address`; the plaintext exists only in the return value. `prepare` runs
   * before the record is stored (its limits go to the ledger first, so no crash leaves a key
   * working without the limits it was minted with).
   */
  async create(options: {
    address: string;
    name: string;
    verified: boolean;
    prepare?: (record: ApiKeyRecord) => Promise<void>;
  }): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const hash = hashKey(key);
    const record: ApiKeyRecord = {
      id: `key_${randomBytes(9).toString('base64url')}`,
      name: options.name,
      address: options.address.toLowerCase(),
      created_at: Math.floor(this.now() / 1000),
      last_used_at: null,
      verified: options.verified,
      prefix: key.slice(0, KEY_PREFIX.length + 4),
    };
    await options.prepare?.(record);
    await this.store.insert(hash, record);
    this.changed({ kind: 'created', hash });
    return { key, record };
  }

  /** The record of a presented key if this process holds it in memory (a hit moves up the LRU). */
  findInMemory(key: string): KnownKey<L> | undefined {
    return KEY_PATTERN.test(key) ? this.cache.get(hashKey(key)) : undefined;
  }

  /** The record of a presented key, or undefined when it is malformed, unknown or revoked. */
  async find(key: string): Promise<KnownKey<L> | undefined> {
    if (!KEY_PATTERN.test(key)) return undefined;
    const hash = hashKey(key);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const generation = this.generation;
    const stored = await this.store.get(hash);
    const limits = stored && this.limitsOf ? await this.limitsOf(stored.id) : undefined;
    const record: KnownKey<L> | undefined = stored && limits !== undefined ? { ...stored, limits } : stored;
    // A forget or clear during the read may be this key's revocation, after the read's snapshot:
    // the record is answered (it was valid when read) but not cached.
    if (record && generation === this.generation) this.cache.set(hash, record);
    return record;
  }

  /**
   * Record a use, off the request path: written only when last_used_at is a minute old or more,
   * and a failed write is reported, never the request's failure.
   */
  touch(key: string, record: ApiKeyRecord): void {
    const now = this.now();
    if (record.last_used_at !== null && now - record.last_used_at * 1000 < TOUCH_INTERVAL_MS) return;
    const lastUsedAt = Math.floor(now / 1000);
    // The cached copy (the same object `find` returned) moves first, so the next requests of this
    // minute do not write again.
    record.last_used_at = lastUsedAt;
    this.store.touch(hashKey(key), lastUsedAt).catch(this.onTouchError);
  }

  /** The wallet's keys, oldest first. */
  async list(address: string): Promise<ApiKeyListing[]> {
    const entries = await this.store.list(address.toLowerCase());
    // A cached record may be newer (its last_used_at write is still on its way).
    return entries.map(({ hash, record }) => {
      const { address: _address, ...listing } = this.cache.peek(hash) ?? record;
      return listing;
    });
  }

  /** The wallet's key `id` had its limits changed: every cache drops it (as a revocation); false when the wallet has no such key. */
  async limitsChanged(address: string, id: string): Promise<boolean> {
    const entry = (await this.store.list(address.toLowerCase())).find((e) => e.record.id === id);
    if (!entry) return false;
    this.changed({ kind: 'changed', hash: entry.hash });
    return true;
  }

  /** The wallet's key `id`, when it has one. */
  async byId(address: string, id: string): Promise<ApiKeyListing | undefined> {
    return (await this.list(address)).find((listing) => listing.id === id);
  }

  /** Revoke the wallet's key `id`; false when the wallet has no such key. */
  async revoke(address: string, id: string): Promise<boolean> {
    const hash = await this.store.remove(address.toLowerCase(), id);
    if (hash === undefined) return false;
    this.changed({ kind: 'revoked', hash });
    return true;
  }

  /** Hear about every key created or revoked through this instance. */
  onChange(listener: (change: KeyChange) => void): void {
    this.listeners.push(listener);
  }

  /** Drop one cached record (another instance created or revoked it). */
  forget(hash: string): void {
    this.generation++;
    this.cache.delete(hash);
  }

  /** Drop every cached record (changes may have been missed). */
  clear(): void {
    this.generation++;
    this.cache.clear();
  }

  private changed(change: KeyChange): void {
    this.generation++;
    this.cache.delete(change.hash);
    for (const listener of this.listeners) listener(change);
  }
}
