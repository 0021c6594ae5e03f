/**
 * Stored responses in the DATA_DIR SQLite file (embedded mode), on the ledger's connection:
 * better-sqlite3 runs each statement synchronously, and a second connection writing while the
 * ledger's transaction is open would wait on this same thread. Storing is two statements issued
 * together (insert, then drop the wallet's oldest past the quota), each atomic on its own; the
 * ledger's transactions run in one synchronous call, so neither can land inside one.
 *
 * @example
 *   const responses = await openSqliteResponseStore(db, { maxPerWallet: 100, maxBytesPerWallet: 16 << 20 })
 */
import type { SqliteConnection } from './sqlite-connection.js';
import { bodyBytes } from '../response-bytes.js';
import { type ResponseQuota, type ResponseStore, type StoredResponse } from '../../responses/response-store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS responses (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  wallet TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_by_wallet ON responses (wallet, seq);
CREATE INDEX IF NOT EXISTS responses_by_expiry ON responses (expires_at)`;

/** The wallet's records past the quota or expired, newest kept first. */
const TRIM = `
DELETE FROM responses WHERE seq IN (
  SELECT seq FROM (
    SELECT seq, expires_at,
      ROW_NUMBER() OVER (ORDER BY seq DESC) AS n,
      SUM(bytes) OVER (ORDER BY seq DESC) AS running
    FROM responses WHERE wallet = ?
  ) WHERE n > ? OR running > ? OR expires_at <= ?
)`;

export async function openSqliteResponseStore(db: SqliteConnection, quota: ResponseQuota): Promise<ResponseStore> {
  await db.exec(SCHEMA);
  return {
    async put(record: StoredResponse) {
      const bytes = bodyBytes(record.body);
      if (bytes > quota.maxBytesPerWallet) return false;
      const inserted = db.run('INSERT INTO responses (id, wallet, created_at, expires_at, bytes, body) VALUES (?, ?, ?, ?, ?, ?)', [
        record.id,
        record.wallet,
        record.createdAt,
        record.expiresAt,
        bytes,
        record.body,
      ]);
      const trimmed = db.run(TRIM, [record.wallet, quota.maxPerWallet, quota.maxBytesPerWallet, record.createdAt]);
      await Promise.all([inserted, trimmed]);
      return true;
    },
    async get(id, wallet, now) {
      const rows = await db.all<{ body: string }>('SELECT body FROM responses WHERE id = ? AND wallet = ? AND expires_at > ?', [
        id,
        wallet,
        now,
      ]);
      return rows[0]?.body;
    },
    async delete(id, wallet, now) {
      const rows = await db.all<{ seq: number }>('DELETE FROM responses WHERE id = ? AND wallet = ? AND expires_at > ? RETURNING seq', [
        id,
        wallet,
        now,
      ]);
      return rows.length > 0;
    },
    async sweep(now) {
      const rows = await db.all<{ seq: number }>('DELETE FROM responses WHERE expires_at <= ? RETURNING seq', [now]);
      return rows.length;
    },
  };
}
