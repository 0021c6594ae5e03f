/**
 * A deposit record as both databases keep it, and the record it reads back as. Shared by the
 * SQLite and PostgreSQL deposit stores and the migrate-to-postgres CLI, which copies the rows.
 */
import type { DepositRecord, DepositStatus } from '../deposits/deposit-store.js';

/** A deposit's row as both stores keep it (amount as decimal text). */
export interface DepositRow {
  seq: number;
  chain_id: number;
  tx_hash: string;
  log_index: number;
  block_number: number;
  block_hash: string;
  token: string;
  wallet: string;
  amount: string;
  status: DepositStatus;
  credits: number | null;
  seen_at: number;
  credited_at: number | null;
}

export function toDepositRecord(row: DepositRow): DepositRecord {
  return {
    seq: row.seq,
    chainId: row.chain_id,
    txHash: row.tx_hash,
    logIndex: row.log_index,
    blockNumber: row.block_number,
    blockHash: row.block_hash,
    token: row.token,
    wallet: row.wallet,
    amount: BigInt(row.amount),
    status: row.status,
    credits: row.credits,
    seenAt: row.seen_at,
    creditedAt: row.credited_at,
  };
}
