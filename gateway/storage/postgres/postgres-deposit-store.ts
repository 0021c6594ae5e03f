/**
 * Deposit records on PostgreSQL (cluster mode, migration 7). Every instance runs a watcher and
 * writes here; each write is one statement whose conditions keep concurrent watchers harmless: a
 * log seen twice is one row, a credited row never goes back, a row re-recorded in its new block
 * by one instance is not marked reorged by another that checked the old block, and the shared
 * cursor only moves forward.
 *
 * @example
 *   const deposits = new PostgresDepositStore(db.sql)
 *   await deposits.pending(8453)
 */
import { guarded, type Sql } from './database.js';
import { toDepositRecord, type DepositRow } from '../deposit-rows.js';
import { type DepositKey, type DepositRecord, type DepositStore, type SeenDeposit } from '../../deposits/deposit-store.js';

export class PostgresDepositStore implements DepositStore {
  constructor(private readonly sql: Sql) {}

  async recordSeen(deposits: SeenDeposit[], now: number): Promise<number> {
    let added = 0;
    for (const d of deposits) {
      // xmax = 0 on a returned row: it was inserted, not updated.
      const rows = await guarded(
        () => this.sql<Array<{ inserted: boolean }>>`
        insert into deposits (chain_id, tx_hash, log_index, block_number, block_hash, token, wallet, amount, status, seen_at)
        values (${d.chainId}::bigint, ${d.txHash}, ${d.logIndex}, ${d.blockNumber}::bigint, ${d.blockHash}, ${d.token}, ${d.wallet},
          ${d.amount.toString()}::numeric, 'pending', ${now}::bigint)
        on conflict (chain_id, tx_hash, log_index) do update
          set block_number = excluded.block_number, block_hash = excluded.block_hash, status = 'pending'
          where deposits.status <> 'credited' and (deposits.status = 'reorged' or deposits.block_hash <> excluded.block_hash)
        returning (xmax = 0) as inserted`,
      );
      if (rows[0]?.inserted) added++;
    }
    return added;
  }

  async pending(chainId: number): Promise<DepositRecord[]> {
    const rows = await guarded(
      () => this.sql<DepositRow[]>`
      select * from deposits where chain_id = ${chainId}::bigint and status = 'pending' order by block_number, log_index`,
    );
    return rows.map(toDepositRecord);
  }

  async markCredited(key: DepositKey, credits: number, now: number): Promise<void> {
    await guarded(
      () => this.sql`
      update deposits set status = 'credited', credits = ${credits}::bigint, credited_at = coalesce(credited_at, ${now}::bigint)
      where chain_id = ${key.chainId}::bigint and tx_hash = ${key.txHash} and log_index = ${key.logIndex}`,
    );
  }

  async markReorged(key: DepositKey, blockHash: string): Promise<void> {
    await guarded(
      () => this.sql`
      update deposits set status = 'reorged'
      where chain_id = ${key.chainId}::bigint and tx_hash = ${key.txHash} and log_index = ${key.logIndex}
        and status = 'pending' and block_hash = ${blockHash}`,
    );
  }

  async forWallet(wallet: string, options: { limit: number; beforeSeq?: number }): Promise<DepositRecord[]> {
    const rows = await guarded(
      () => this.sql<DepositRow[]>`
      select * from deposits where wallet = ${wallet.toLowerCase()} and seq < ${options.beforeSeq ?? Number.MAX_SAFE_INTEGER}::bigint
      order by seq desc limit ${options.limit}`,
    );
    return rows.map(toDepositRecord);
  }

  async cursor(chainId: number): Promise<number | undefined> {
    const [row] = await guarded(
      () => this.sql<Array<{ next_block: number }>>`select next_block from deposit_cursors where chain_id = ${chainId}::bigint`,
    );
    return row?.next_block;
  }

  async saveCursor(chainId: number, nextBlock: number): Promise<void> {
    await guarded(
      () => this.sql`
      insert into deposit_cursors (chain_id, next_block) values (${chainId}::bigint, ${nextBlock}::bigint)
      on conflict (chain_id) do update set next_block = greatest(deposit_cursors.next_block, excluded.next_block)`,
    );
  }

  /** The pool belongs to the cluster stores, which close it. */
  async close(): Promise<void> {}
}
