/**
 * Every x402 payment the gateway has sent for settlement, by its id (`<CAIP-2 network>:<EIP-3009
 * nonce>`, the id it is credited under): `pending` from the moment it is claimed until it is
 * credited, or forgotten when it certainly never settled. A pending record outlives a crash or a
 * settlement timeout, so the reconciler can finish it from the chain; a credited one answers a
 * replay. The embedded store keeps them in the DATA_DIR SQLite file; cluster mode in PostgreSQL
 * (`postgres/postgres-x402-payment-records.ts`, migration 8).
 *
 * @example
 *   const earlier = await records.claim(record)   // undefined: this call recorded it
 */
import type { SqliteConnection } from './sqlite-connection.js';

export interface X402PaymentRecord {
  id: string;
  /** The payer, which is the wallet credited; lower case. */
  wallet: string;
  network: string;
  /** The token contract, lower case. */
  asset: string;
  /** Atomic units paid. */
  amount: bigint;
  nonce: string;
  /** The signature presented: the same payment sent again carries the same one. */
  signature: string;
  /** Unix seconds after which the authorization can no longer settle. */
  validBefore: number;
  /** The chain's latest block when it was claimed: its settlement is at or after it. */
  fromBlock: bigint;
  /** The terms offered when it was claimed (lower-case pay-to, atomic units per credit): a config change never re-judges it. */
  payTo: string;
  unitsPerCredit: bigint;
  state: 'pending' | 'credited';
  /** The settlement transaction, when the facilitator reported it. */
  transaction: string | null;
}

export interface X402PaymentRecords {
  /** The record of payment `id`, if one is kept. */
  find(id: string): Promise<X402PaymentRecord | undefined>;
  /** Record `record` as pending, unless its id is already recorded: then the stored record, unchanged. */
  claim(record: Omit<X402PaymentRecord, 'state' | 'transaction'>): Promise<X402PaymentRecord | undefined>;
  /** Mark it credited (the ledger holds the credit under the same id). */
  credited(id: string, transaction: string | null): Promise<void>;
  /** Drop a pending record that certainly moved no money (refused, or expired unused on chain). */
  forget(id: string): Promise<void>;
  /** Pending records, oldest first. */
  pending(limit: number): Promise<X402PaymentRecord[]>;
}

export const X402_PAYMENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS x402_payments (
    id TEXT PRIMARY KEY, wallet TEXT NOT NULL, network TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL,
    nonce TEXT NOT NULL, signature TEXT NOT NULL, valid_before INTEGER NOT NULL, from_block TEXT NOT NULL,
    pay_to TEXT NOT NULL, units_per_credit TEXT NOT NULL, state TEXT NOT NULL, tx TEXT, seq INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS x402_payments_pending ON x402_payments (state, seq);`;

/** A stored row in either database (amount as text: it may pass 2^53). */
export interface X402PaymentRow {
  id: string;
  wallet: string;
  network: string;
  asset: string;
  amount: string;
  nonce: string;
  signature: string;
  valid_before: number | string;
  from_block: string;
  pay_to: string;
  units_per_credit: string;
  state: string;
  tx: string | null;
  /** Insertion order (and, in SQLite, which claim wrote the row). */
  seq: number | string;
}

export function recordFromRow(row: X402PaymentRow): X402PaymentRecord {
  return {
    id: row.id,
    wallet: row.wallet,
    network: row.network,
    asset: row.asset,
    amount: BigInt(row.amount),
    nonce: row.nonce,
    signature: row.signature,
    validBefore: Number(row.valid_before),
    fromBlock: BigInt(row.from_block),
    payTo: row.pay_to,
    unitsPerCredit: BigInt(row.units_per_credit),
    state: row.state === 'credited' ? 'credited' : 'pending',
    transaction: row.tx,
  };
}

/** The embedded store: the ledger's SQLite connection (better-sqlite3 runs each statement at once, so a claim is atomic here). */
export async function openSqliteX402PaymentRecords(db: SqliteConnection): Promise<X402PaymentRecords> {
  await db.exec(X402_PAYMENTS_SCHEMA);
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
