/**
 * A DATA_DIR written before the API keys had their own file kept them as Keyv rows (`keys:…`) in
 * the ledger's file, beside SIWE nonces of a still older version (`nonces:…`, never expired). Two
 * SQLite libraries must not write one file (sqlite/keyv-store.ts says why), so at the first start
 * the key rows are copied into a new keys file, through the ledger's connection, and removed from
 * the old one.
 *
 * The new file is built beside its final name and renamed into place once committed (an attached
 * database keeps the rollback journal: the whole file is in place when it is detached), so a crash
 * leaves either no keys file, and the next start builds it again, or a whole one. The rename is
 * made durable (the directory synced) before the old rows are deleted, which happens whenever a
 * keys file exists: a crash between the two is finished at the next start. Going back to a
 * version from before the split is not supported: it would keep new keys in the old table again,
 * and the next start of this one would delete them. Call it after the ledger has migrated its own
 * Keyv rows (keyv-ledger-migration.ts), so the emptied table goes at once, and before Keyv opens
 * the keys file.
 *
 * @example
 *   const db = await openSqlite(join(dataDir, STORE_FILE))
 *   await moveKeysToOwnFile(db, dataDir)   // then openStore(dataDir)
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hasTable, type SqliteConnection } from '../sqlite/sqlite-connection.js';
import { KEYS_FILE } from '../sqlite/keyv-store.js';

/** The Keyv rows that leave the ledger's file: keys go to the keys file, nonces nowhere. */
const LEAVING = `key LIKE 'keys:%' OR key LIKE 'nonces:%'`;

export async function moveKeysToOwnFile(db: SqliteConnection, dataDir: string): Promise<void> {
  if (!(await hasTable(db, 'keyv'))) return;
  const keysFile = join(dataDir, KEYS_FILE);
  if (!existsSync(keysFile)) {
    const keys = await db.all(`SELECT 1 FROM keyv WHERE key LIKE 'keys:%' LIMIT 1`);
    if (keys.length > 0) await copyKeys(db, keysFile);
  }
  await db.run(`DELETE FROM keyv WHERE ${LEAVING}`);
  // Rows of no namespace this version knows stay where they were.
  const left = await db.all(`SELECT 1 FROM keyv LIMIT 1`);
  if (left.length === 0) await db.exec('DROP TABLE keyv');
}

async function copyKeys(db: SqliteConnection, keysFile: string): Promise<void> {
  const partial = `${keysFile}.partial`;
  // What a crash during an earlier copy left.
  rmSync(partial, { force: true });
  rmSync(`${partial}-journal`, { force: true });
  await db.run('ATTACH DATABASE ? AS moving', [partial]);
  try {
    await db.transaction([
      // The table exactly as @keyv/sqlite creates it.
      { sql: 'CREATE TABLE moving.keyv(key VARCHAR(255) PRIMARY KEY, value TEXT )', params: [] },
      { sql: `INSERT INTO moving.keyv (key, value) SELECT key, value FROM main.keyv WHERE key LIKE 'keys:%'`, params: [] },
    ]);
  } catch (err) {
    await db.exec('DETACH DATABASE moving').catch(() => {}); // the copy's own error is the one to report
    throw err;
  }
  await db.exec('DETACH DATABASE moving');
  // A WAL an operator left after deleting a keys file would be replayed into the new one.
  rmSync(`${keysFile}-wal`, { force: true });
  rmSync(`${keysFile}-shm`, { force: true });
  renameSync(partial, keysFile);
  const dir = openSync(dirname(keysFile), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
