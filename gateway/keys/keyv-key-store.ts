/**
 * API key records over Keyv (the embedded SQLite store): `keys:<sha256 hex>` → record, and
 * `keys:wallet:<address>` → the wallet's [{id, hash}] index, both changed under the wallet's lock
 * in this process (the DATA_DIR lock makes it the only writer).
 *
 * @example
 *   const keys = new ApiKeys(new KeyvKeyStore(store.keys))
 */
import type Keyv from 'keyv';
import { z } from 'zod';
import { TooManyApiKeys } from '../errors.js';
import { KeyedMutex } from '../keyed-mutex.js';
import { MAX_KEYS_PER_WALLET, apiKeyRecordSchema, type ApiKeyRecord, type KeyStore } from './key-store.js';

const walletIndexSchema = z.array(z.object({ id: z.string(), hash: z.string() }));
type WalletIndex = z.infer<typeof walletIndexSchema>;

const indexKey = (address: string) => `wallet:${address}`;

export class KeyvKeyStore implements KeyStore {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly keys: Keyv) {}

  insert(hash: string, record: ApiKeyRecord): Promise<void> {
    return this.mutex.run(record.address, async () => {
      // Index first: a crash between the writes leaves a dangling index entry (skipped when
      // listing), never a working key its owner cannot see or revoke.
      let index = await this.index(record.address);
      if (index.length >= MAX_KEYS_PER_WALLET) {
        // Entries left dangling by a crash between the two writes do not count against the cap.
        const live = await Promise.all(index.map(async (entry) => (await this.get(entry.hash)) !== undefined));
        index = index.filter((_entry, i) => live[i]);
        if (index.length >= MAX_KEYS_PER_WALLET) throw new TooManyApiKeys(MAX_KEYS_PER_WALLET);
      }
      index.push({ id: record.id, hash });
      await this.keys.set(indexKey(record.address), index);
      await this.keys.set(hash, record);
    });
  }

  async get(hash: string): Promise<ApiKeyRecord | undefined> {
    const parsed = apiKeyRecordSchema.safeParse(await this.keys.get(hash));
    return parsed.success ? parsed.data : undefined;
  }

  async list(address: string): Promise<Array<{ hash: string; record: ApiKeyRecord }>> {
    const index = await this.index(address);
    const records = await Promise.all(index.map(async (entry) => ({ hash: entry.hash, record: await this.get(entry.hash) })));
    return records.filter((entry): entry is { hash: string; record: ApiKeyRecord } => entry.record !== undefined);
  }

  remove(address: string, id: string): Promise<string | undefined> {
    return this.mutex.run(address, async () => {
      const index = await this.index(address);
      const entry = index.find((e) => e.id === id);
      if (!entry) return undefined;
      // The key stops working the moment its record is gone; the index entry goes after.
      await this.keys.delete(entry.hash);
      await this.keys.set(
        indexKey(address),
        index.filter((e) => e.id !== id),
      );
      return entry.hash;
    });
  }

  async touch(hash: string, lastUsedAt: number): Promise<void> {
    const record = await this.get(hash);
    if (!record) return;
    await this.mutex.run(record.address, async () => {
      // Re-read under the wallet's lock: a revocation may have happened meanwhile, and a stale
      // write would bring the key back.
      const current = await this.get(hash);
      if (current) await this.keys.set(hash, { ...current, last_used_at: lastUsedAt });
    });
  }

  private async index(address: string): Promise<WalletIndex> {
    const parsed = walletIndexSchema.safeParse(await this.keys.get(indexKey(address)));
    return parsed.success ? parsed.data : [];
  }
}
