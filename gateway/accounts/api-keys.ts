/**
 * API keys: `sy_` + base64url(32 random bytes), shown once. Only the SHA-256 hex is stored, with
 * name, address, created_at, last_used_at and whether a wallet-ownership proof minted it.
 *
 * @example
 *   const keys = new ApiKeys(store)
 *   const { key } = await keys.create({ address, name: 'laptop', verified: true })
 *   const record = await keys.find(key)   // undefined when unknown or revoked
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { AccountsStore } from './store.js';
import { KeyedMutex } from './keyed-mutex.js';
import { GatewayError } from '../errors.js';

export const KEY_PREFIX = 'sy_';
/** A key as it appears in `Authorization: Bearer …`: the prefix and exactly 43 base64url chars. */
export const KEY_PATTERN = /^sy_[A-Za-z0-9_-]{43}$/;
/** last_used_at is written at most this often per key (a write per request would dominate). */
const TOUCH_INTERVAL_MS = 60_000;
/**
 * Active keys one wallet may hold. The wallet's index is rewritten whole on every mint, and in
 * free mode anyone can mint for any wallet: without a cap one wallet could grow it without end.
 */
export const MAX_KEYS_PER_WALLET = 100;

/** 409 too_many_api_keys: the wallet holds MAX_KEYS_PER_WALLET keys; revoke one first. */
export class TooManyApiKeys extends GatewayError {
  constructor() {
    super({
      status: 409,
      code: 'too_many_api_keys',
      message: `This wallet already has ${MAX_KEYS_PER_WALLET} API keys; revoke one (DELETE /auth/api-keys/:id) before creating another.`,
    });
  }
}

const keyRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  address: z.string(),
  /** Unix seconds. */
  created_at: z.number().int(),
  last_used_at: z.number().int().nullable(),
  verified: z.boolean(),
  /** The first characters of the key: enough to recognise it, useless to an attacker. */
  prefix: z.string(),
});
export type ApiKeyRecord = z.infer<typeof keyRecordSchema>;

const walletIndexSchema = z.array(z.object({ id: z.string(), hash: z.string() }));

/** What GET /auth/api-keys shows: never the key, never its hash. */
export type ApiKeyListing = Omit<ApiKeyRecord, 'address'>;

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const indexKey = (address: string) => `wallet:${address}`;

export class ApiKeys {
  private readonly mutex = new KeyedMutex();

  private readonly now: () => number;

  constructor(
    private readonly store: AccountsStore,
    options: { now?: () => number } = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Mint a key for `address`; the plaintext exists only in the return value. */
  async create(options: { address: string; name: string; verified: boolean }): Promise<{ key: string; record: ApiKeyRecord }> {
    const address = options.address.toLowerCase();
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const hash = hashKey(key);
    const record: ApiKeyRecord = {
      id: `key_${randomBytes(9).toString('base64url')}`,
      name: options.name,
      address,
      created_at: Math.floor(this.now() / 1000),
      last_used_at: null,
      verified: options.verified,
      prefix: key.slice(0, KEY_PREFIX.length + 4),
    };
    await this.mutex.run(address, async () => {
      // Index first: a crash between the writes leaves a dangling index entry (skipped when
      // listing), never a working key its owner cannot see or revoke.
      let index = await this.index(address);
      if (index.length >= MAX_KEYS_PER_WALLET) {
        // Entries left dangling by a crash between the two writes do not count against the cap.
        const live = await Promise.all(index.map(async (entry) => (await this.read(entry.hash)) !== undefined));
        index = index.filter((_entry, i) => live[i]);
        if (index.length >= MAX_KEYS_PER_WALLET) throw new TooManyApiKeys();
      }
      index.push({ id: record.id, hash });
      await this.store.keys.set(indexKey(address), index);
      await this.store.keys.set(hash, record);
    });
    return { key, record };
  }

  /** The record of a presented key, or undefined when it is malformed, unknown or revoked. */
  async find(key: string): Promise<ApiKeyRecord | undefined> {
    if (!KEY_PATTERN.test(key)) return undefined;
    return this.read(hashKey(key));
  }

  /** Record a use; writes only when the stored last_used_at is a minute old or more. */
  async touch(key: string, record: ApiKeyRecord): Promise<void> {
    const now = this.now();
    if (record.last_used_at !== null && now - record.last_used_at * 1000 < TOUCH_INTERVAL_MS) return;
    const hash = hashKey(key);
    await this.mutex.run(record.address, async () => {
      // Re-read under the wallet's lock: a revocation may have happened meanwhile, and a stale
      // write would bring the key back.
      const current = await this.read(hash);
      if (!current || (current.last_used_at !== null && now - current.last_used_at * 1000 < TOUCH_INTERVAL_MS)) return;
      await this.store.keys.set(hash, { ...current, last_used_at: Math.floor(now / 1000) });
    });
  }

  /** The wallet's keys, oldest first. */
  async list(address: string): Promise<ApiKeyListing[]> {
    const index = await this.index(address.toLowerCase());
    const records = await Promise.all(index.map((entry) => this.read(entry.hash)));
    return records.filter((r): r is ApiKeyRecord => r !== undefined).map(({ address: _address, ...listing }) => listing);
  }

  /** Revoke the wallet's key `id`; false when the wallet has no such key. */
  async revoke(address: string, id: string): Promise<boolean> {
    const wallet = address.toLowerCase();
    return this.mutex.run(wallet, async () => {
      const index = await this.index(wallet);
      const entry = index.find((e) => e.id === id);
      if (!entry) return false;
      // The key stops working the moment its record is gone; the index entry goes after.
      await this.store.keys.delete(entry.hash);
      await this.store.keys.set(
        indexKey(wallet),
        index.filter((e) => e.id !== id),
      );
      return true;
    });
  }

  private async read(hash: string): Promise<ApiKeyRecord | undefined> {
    const parsed = keyRecordSchema.safeParse(await this.store.keys.get(hash));
    return parsed.success ? parsed.data : undefined;
  }

  private async index(address: string): Promise<z.infer<typeof walletIndexSchema>> {
    const parsed = walletIndexSchema.safeParse(await this.store.keys.get(indexKey(address)));
    return parsed.success ? parsed.data : [];
  }
}
