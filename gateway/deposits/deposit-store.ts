/**
 * Where the deposit watcher keeps what it saw on chain: one record per Transfer log to a
 * treasury, by (chain id, tx hash, log index), with its status, and a scan cursor per chain.
 * Implemented on SQLite (embedded, storage/sqlite/sqlite-deposit-store.ts) and PostgreSQL
 * (cluster, storage/postgres/postgres-deposit-store.ts). The exactly-once credit is not kept
 * here: it is the ledger's permanent external-credit record (`Ledger.creditExternal`, source
 * `deposit`), written in the same step as the credits; the status here follows it.
 */

export type DepositStatus = 'pending' | 'credited' | 'reorged';

/** Which log a deposit is: its identity on its chain. */
export interface DepositKey {
  chainId: number;
  /** Lower-case 0x hex. */
  txHash: string;
  logIndex: number;
}

/** A Transfer log to a treasury, as read from the chain. */
export interface SeenDeposit extends DepositKey {
  blockNumber: number;
  blockHash: string;
  /** The token contract, lower case. */
  token: string;
  /** The sender, lower case: the wallet that is credited. */
  wallet: string;
  /** Atomic units transferred. */
  amount: bigint;
}

export interface DepositRecord extends SeenDeposit {
  status: DepositStatus;
  /** Credits this deposit added once credited; null before. */
  credits: number | null;
  /** Unix ms. */
  seenAt: number;
  creditedAt: number | null;
  /** Insertion order: what "newest first" and the page cursor go by. */
  seq: number;
}

export interface DepositStore {
  /**
   * Record logs as seen: a new one is pending; a pending or reorged one seen again in another
   * block (re-mined) moves there and is pending; a credited one is left alone. Returns how many
   * were new.
   */
  recordSeen(deposits: SeenDeposit[], now: number): Promise<number>;
  /** The chain's pending deposits, oldest block first. */
  pending(chainId: number): Promise<DepositRecord[]>;
  markCredited(key: DepositKey, credits: number, now: number): Promise<void>;
  /** Pending and still at `blockHash` (the block the chain no longer has) → reorged. */
  markReorged(key: DepositKey, blockHash: string): Promise<void>;
  /** The wallet's deposits, newest first, those older than `beforeSeq` when given. */
  forWallet(wallet: string, options: { limit: number; beforeSeq?: number }): Promise<DepositRecord[]>;
  /** The next block to scan on this chain; undefined before the first scan. */
  cursor(chainId: number): Promise<number | undefined>;
  /** Set the next block to scan (never moves it back: instances in cluster mode share it). */
  saveCursor(chainId: number, nextBlock: number): Promise<void>;
  close(): Promise<void>;
}

/** The permanent id of a deposit in the ledger's external-credit records. */
export function depositId(key: DepositKey): string {
  return `${key.chainId}:${key.txHash}:${key.logIndex}`;
}
