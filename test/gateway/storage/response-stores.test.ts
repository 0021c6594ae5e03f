/**
 * The ResponseStore contract on both implementations: the embedded SQLite store (a temporary
 * DATA_DIR file) and the PostgreSQL store (a throw-away database, migrated; skipped loudly when
 * PostgreSQL cannot be reached, failing under CI=true); and, beneath the contract, that an item's
 * index row goes when its response does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite, type SqliteConnection } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { openSqliteResponseStore } from '../../../gateway/storage/sqlite/sqlite-response-store.js';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { migrate } from '../../../gateway/storage/postgres/migrate.js';
import { PostgresResponseStore } from '../../../gateway/storage/postgres/postgres-response-store.js';
import type { ResponseStore } from '../../../gateway/responses/response-store.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { CONTRACT_QUOTA, responseStoreContract } from '../responses/response-store-contract.js';

const services = await clusterServices();
const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-responses-'));
let sqlite: SqliteConnection;
let sqliteStore: ResponseStore;
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
let db: Database | undefined;
let postgresStore: ResponseStore;

before(async () => {
  sqlite = await openSqlite(join(dataDir, 'switchyard.sqlite'));
  sqliteStore = await openSqliteResponseStore(sqlite, CONTRACT_QUOTA);
  if (services.skip) return;
  database = await freshDatabase();
  db = await openDatabase(database.url);
  await migrate(db.sql);
  postgresStore = new PostgresResponseStore(db.sql, CONTRACT_QUOTA);
});
after(async () => {
  await sqlite?.close();
  rmSync(dataDir, { recursive: true, force: true });
  await db?.close();
  await database?.drop();
});

responseStoreContract('SQLite', () => sqliteStore);
responseStoreContract('PostgreSQL', () => postgresStore, { skip: services.skip });

test('the item index loses its rows with their responses, not only from sight (SQLite trigger, PostgreSQL cascade)', async () => {
  const quota = { maxPerWallet: 1, maxBytesPerWallet: 10_000 };
  const wallet = `0x${'ab'.repeat(20)}`;
  const now = Date.now();
  const record = (id: string, ttl: number) => ({
    id,
    wallet,
    createdAt: now,
    expiresAt: now + ttl,
    body: '{}',
    itemIds: [`msg_${id}`, `mcp_${id}`],
  });
  const counts: Array<() => Promise<number>> = [];
  const stores: ResponseStore[] = [await openSqliteResponseStore(sqlite, quota)];
  counts.push(async () => (await sqlite.all<{ n: number }>('SELECT count(*) AS n FROM response_items'))[0].n);
  if (db) {
    const sql = db.sql;
    await sql`delete from responses`;
    stores.push(new PostgresResponseStore(sql, quota));
    counts.push(async () => Number((await sql<Array<{ n: string }>>`select count(*) as n from response_items`)[0].n));
  }
  for (const [i, store] of stores.entries()) {
    const count = counts[i];
    const before = await count();
    await store.put(record(`a${i}`, 60_000));
    assert.equal(await count(), before + 2);
    await store.put(record(`b${i}`, 1_000)); // the quota (1) drops a, and its items
    assert.equal(await count(), before + 2);
    assert.equal(await store.sweep(now + 1_000), 1); // b expired
    assert.equal(await count(), before);
    await store.put(record(`c${i}`, 60_000));
    assert.equal(await store.delete(`c${i}`, wallet, now), true);
    assert.equal(await count(), before);
  }
});
