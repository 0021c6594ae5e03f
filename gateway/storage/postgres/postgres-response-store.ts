/**
 * Stored responses on PostgreSQL (cluster mode), behind the same ResponseStore contract as the
 * SQLite store: any instance reads what another stored. Storing runs `response_put` (migration 12's,
 * with the output item ids; migration 6 made the first), which inserts the response and its items'
 * index and trims the wallet to its quota under a per-wallet lock; items go with their response
 * (a cascading foreign key).
 *
 * @example
 *   const responses = new PostgresResponseStore(db.sql, { maxPerWallet: 100, maxBytesPerWallet: 16 << 20 })
 */
import { bodyBytes } from '../response-bytes.js';
import { type FoundItems, type ResponseQuota, type ResponseStore, type StoredResponse } from '../../responses/response-store.js';
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
        ${record.body}, ${this.quota.maxPerWallet}::int, ${this.quota.maxBytesPerWallet}::bigint, ${record.itemIds}::text[])`,
    );
    return true;
  }

  async findItems(itemIds: string[], wallet: string, now: number): Promise<FoundItems> {
    const found: FoundItems = { responseOf: new Map(), bodies: new Map() };
    if (itemIds.length === 0) return found;
    const rows = await guarded(
      () => this.sql<Array<{ item_id: string; id: string; body: string }>>`
        select i.item_id, r.id, r.body from response_items i join responses r on r.seq = i.response_seq
        where i.item_id = any(${itemIds}::text[]) and r.wallet = ${wallet} and r.expires_at > ${now}::bigint`,
    );
    for (const row of rows) {
      found.responseOf.set(row.item_id, row.id);
      found.bodies.set(row.id, row.body);
    }
    return found;
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
