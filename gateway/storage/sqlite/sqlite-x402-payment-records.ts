/**
 * x402 payment records in the DATA_DIR SQLite file (embedded mode), on the ledger's connection
 * (better-sqlite3 runs each statement at once, so a claim is atomic here).
 *
 * @example
 *   const records = await openSqliteX402PaymentRecords(db)
 *   const earlier = await records.claim(record)   // undefined: this call recorded it
 */
import type { X402PaymentRecords } from '../../x402/payment-records.js';
import { recordFromRow, type X402PaymentRow } from '../x402-payment-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS x402_payments (
    id TEXT PRIMARY KEY, wallet TEXT NOT NULL, network TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL,
    nonce TEXT NOT NULL, signature TEXT NOT NULL, valid_before INTEGER NOT NULL, from_block TEXT NOT NULL,
    pay_to TEXT NOT NULL, units_per_credit TEXT NOT NULL, state TEXT NOT NULL, tx TEXT, seq INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS x402_payments_pending ON x402_payments (state, seq);`;

export async function openSqliteX402PaymentRecords(db: SqliteConnection): Promise<X402PaymentRecords> {
  await db.exec(SCHEMA);
  let seq = Date.now() * 1000;
  const byId = async (id: string) => (await db.all<X402PaymentRow>('SELECT * FROM x402_payments WHERE id = ?', [id]))[0];
  return {
    async find(id) {
      const row = await byId(id);
      return row ? recordFromRow(row) : undefined;
    },
    async claim(record) {
      // Insert-or-keep, then read back: the row is ours when it carries this attempt's seq. (A
      // read, then an insert, would let two requests with one payment both miss and one fail.)
      const mine = ++seq;
      await db.run(
        'INSERT OR IGNORE INTO x402_payments (id, wallet, network, asset, amount, nonce, signature, valid_before, from_block, pay_to, units_per_credit, state, tx, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)',
        [
          record.id,
          record.wallet,
          record.network,
          record.asset,
          String(record.amount),
          record.nonce,
          record.signature,
          record.validBefore,
          String(record.fromBlock),
          record.payTo,
          String(record.unitsPerCredit),
          'pending',
          mine,
        ],
      );
      const stored = await byId(record.id);
      return stored && Number(stored.seq) !== mine ? recordFromRow(stored) : undefined;
    },
    credited: (id, transaction) =>
      db.run("UPDATE x402_payments SET state = 'credited', tx = COALESCE(?, tx) WHERE id = ?", [transaction, id]),
    forget: (id) => db.run("DELETE FROM x402_payments WHERE id = ? AND state = 'pending'", [id]),
    async pending(limit) {
      const rows = await db.all<X402PaymentRow>("SELECT * FROM x402_payments WHERE state = 'pending' ORDER BY seq LIMIT ?", [limit]);
      return rows.map(recordFromRow);
    },
  };
}
