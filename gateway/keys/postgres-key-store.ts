/**
 * API key records on PostgreSQL (cluster mode), behind the same KeyStore contract as the embedded
 * Keyv store: `ApiKeys` keeps its in-process cache on top, and storage/redis/redis-key-invalidation.ts keeps
 * every instance's cache honest. Rows are checked with zod on the way in, as the Keyv store does.
 *
 * @example
 *   const keys = new ApiKeys(new PostgresKeyStore(db.sql))
 */
import { z } from 'zod';
import { TooManyApiKeys } from '../errors.js';
import { MAX_KEYS_PER_WALLET, apiKeyRecordSchema, type ApiKeyRecord, type KeyStore } from './key-store.js';
import { guarded, type Sql } from '../storage/postgres/database.js';

const keyRowSchema = apiKeyRecordSchema.extend({ hash: z.string() });

function toEntry(row: unknown): { hash: string; record: ApiKeyRecord } {
  const { hash, ...record } = keyRowSchema.parse(row);
  return { hash, record };
}

export class PostgresKeyStore implements KeyStore {
  constructor(
    private readonly sql: Sql,
    private readonly maxKeysPerWallet = MAX_KEYS_PER_WALLET,
  ) {}

  async insert(hash: string, record: ApiKeyRecord): Promise<void> {
    const [row] = await guarded(
      () => this.sql<Array<{ inserted: boolean }>>`
        select api_key_insert(${hash}, ${record.id}, ${record.address}, ${record.name}, ${record.created_at}::bigint,
          ${record.verified}, ${record.prefix}, ${this.maxKeysPerWallet}::int) as inserted`,
    );
    if (!row.inserted) throw new TooManyApiKeys(this.maxKeysPerWallet);
  }

  async get(hash: string): Promise<ApiKeyRecord | undefined> {
    const rows = await guarded(() => this.sql`select * from api_keys where hash = ${hash}`);
    return rows.length === 0 ? undefined : toEntry(rows[0]).record;
  }

  async list(address: string): Promise<Array<{ hash: string; record: ApiKeyRecord }>> {
    const rows = await guarded(() => this.sql`select * from api_keys where address = ${address} order by seq`);
    return rows.map(toEntry);
  }

  async remove(address: string, id: string): Promise<string | undefined> {
    const rows = await guarded(
      () => this.sql<Array<{ hash: string }>>`
      delete from api_keys where address = ${address} and id = ${id} returning hash`,
    );
    return rows[0]?.hash;
  }

  async touch(hash: string, lastUsedAt: number): Promise<void> {
    // An UPDATE of a deleted row changes nothing: a revoked key stays revoked.
    await guarded(() => this.sql`update api_keys set last_used_at = ${lastUsedAt}::bigint where hash = ${hash}`);
  }
}
