/**
 * The ResponseStore contract on both implementations: the embedded SQLite store (a temporary
 * DATA_DIR file) and the PostgreSQL store (a throw-away database, migrated; skipped loudly when
 * PostgreSQL cannot be reached, failing under CI=true).
 */
import { after, before } from 'node:test';
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
