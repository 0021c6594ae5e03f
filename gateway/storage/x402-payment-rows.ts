/**
 * An x402 payment record as both databases keep it (amounts as text: they may pass 2^53), and
 * the record it reads back as. Shared by the SQLite and PostgreSQL stores and the
 * migrate-to-postgres CLI, which copies the rows.
 */
import type { X402PaymentRecord } from '../x402/payment-records.js';

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
