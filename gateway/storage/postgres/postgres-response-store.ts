/**
 * Stored responses on PostgreSQL (cluster mode), behind the same ResponseStore contract as the
 * SQLite store: any instance reads what another stored. Storing runs `response_put` (migration 6),
 * which inserts and trims the wallet to its quota under a per-wallet lock.
 *
 * @example
 *   const responses = new PostgresResponseStore(db.sql, { maxPerWallet: 100, maxBytesPerWallet: 16 << 20 })
 */
import { bodyBytes } from '../response-bytes.js';
import { type ResponseQuota, type ResponseStore, type StoredResponse } from '../../responses/response-store.js';
import { guarded, type Sql } from './database.js';

export class PostgresResponseStore implements ResponseStore {
  constructor(
    private readonly sql: Sql,
    private readonly quota: ResponseQuota,
  ) {}

  async put(record: StoredResponse): Promise<boolean> {
    if (bodyBytes(record.body) > this.quota.maxBytesPerWallet) return false;
    await guarded(
      () => this.sql`select response_put(${record.id}, ${record.wallet}, ${record.createdAt}::bigint, ${record.expiresAt}::bigint,
        ${record.body}, ${this.quota.maxPerWallet}::int, ${this.quota.maxBytesPerWallet}::bigint)`,
    );
    return true;
  }

  async get(id: string, wallet: string, now: number): Promise<string | undefined> {
    const rows = await guarded(
      () => this.sql<Array<{ body: string }>>`
        select body from responses where id = ${id} and wallet = ${wallet} and expires_at > ${now}::bigint`,
    );
    return rows[0]?.body;
  }

  async delete(id: string, wallet: string, now: number): Promise<boolean> {
    const rows = await guarded(
      () => this.sql`delete from responses where id = ${id} and wallet = ${wallet} and expires_at > ${now}::bigint returning seq`,
    );
    return rows.length > 0;
  }

  async sweep(now: number): Promise<number> {
    const rows = await guarded(() => this.sql`delete from responses where expires_at <= ${now}::bigint returning seq`);
    return rows.length;
  }
}
