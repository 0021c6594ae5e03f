/**
 * Stored responses in the DATA_DIR SQLite file (embedded mode), on the ledger's connection:
 * better-sqlite3 runs each statement synchronously, and a second connection writing while the
 * ledger's transaction is open would wait on this same thread. Storing is one transaction (insert
 * the record and its output items' index, then drop the wallet's oldest past the quota), run in
 * one synchronous call as the ledger's are. A trigger takes a record's items with it, whichever
 * statement deletes the record (DELETE, the sweep, the quota's trim).
 *
 * @example
 *   const responses = await openSqliteResponseStore(db, { maxPerWallet: 100, maxBytesPerWallet: 16 << 20 })
 */
import type { SqliteConnection } from './sqlite-connection.js';
import { bodyBytes } from '../response-bytes.js';
import { type FoundItems, type ResponseQuota, type ResponseStore, type StoredResponse } from '../../responses/response-store.js';

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
CREATE INDEX IF NOT EXISTS responses_by_expiry ON responses (expires_at);
CREATE TABLE IF NOT EXISTS response_items (
  item_id TEXT PRIMARY KEY,
  response_seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS response_items_by_response ON response_items (response_seq);
CREATE TRIGGER IF NOT EXISTS response_items_go_with_their_response AFTER DELETE ON responses
BEGIN
  DELETE FROM response_items WHERE response_seq = OLD.seq;
END`;

const INSERT = 'INSERT INTO responses (id, wallet, created_at, expires_at, bytes, body) VALUES (?, ?, ?, ?, ?, ?)';
/** The record's output item ids (a JSON array), each pointing at the row just inserted. */
const INSERT_ITEMS = `
INSERT INTO response_items (item_id, response_seq)
SELECT value, (SELECT seq FROM responses WHERE id = ?) FROM json_each(?)`;
const FIND_ITEMS = `
SELECT i.item_id, r.id, r.body FROM response_items i JOIN responses r ON r.seq = i.response_seq
WHERE i.item_id IN (SELECT value FROM json_each(?)) AND r.wallet = ? AND r.expires_at > ?`;

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
      await db.transaction([
        { sql: INSERT, params: [record.id, record.wallet, record.createdAt, record.expiresAt, bytes, record.body] },
        { sql: INSERT_ITEMS, params: [record.id, JSON.stringify(record.itemIds)] },
        { sql: TRIM, params: [record.wallet, quota.maxPerWallet, quota.maxBytesPerWallet, record.createdAt] },
      ]);
      return true;
    },
    async findItems(itemIds, wallet, now) {
      const found: FoundItems = { responseOf: new Map(), bodies: new Map() };
      if (itemIds.length === 0) return found;
      const rows = await db.all<{ item_id: string; id: string; body: string }>(FIND_ITEMS, [JSON.stringify(itemIds), wallet, now]);
      for (const row of rows) {
        found.responseOf.set(row.item_id, row.id);
        found.bodies.set(row.id, row.body);
      }
      return found;
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
