/**
 * Deposit records in the embedded store's SQLite file, on a connection of their own (the ledger's
 * group commit runs its transactions on its connection; a deposit write must never land inside
 * one). The DATA_DIR lock makes this process the only writer. Amounts are decimal text (bigint).
 *
 * @example
 *   const deposits = await openSqliteDepositStore(join(dataDir, STORE_FILE))
 *   await deposits.recordSeen([log], Date.now())
 */
import { openSqlite, type SqliteConnection } from './sqlite-connection.js';
import { toDepositRecord, type DepositRow } from '../deposit-rows.js';
import { type DepositKey, type DepositRecord, type DepositStore, type SeenDeposit } from '../../deposits/deposit-store.js';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS deposits (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    chain_id INTEGER NOT NULL, tx_hash TEXT NOT NULL, log_index INTEGER NOT NULL,
    block_number INTEGER NOT NULL, block_hash TEXT NOT NULL, token TEXT NOT NULL, wallet TEXT NOT NULL,
    amount TEXT NOT NULL, status TEXT NOT NULL, credits INTEGER, seen_at INTEGER NOT NULL, credited_at INTEGER,
    UNIQUE (chain_id, tx_hash, log_index)
  );
  CREATE INDEX IF NOT EXISTS deposits_by_wallet ON deposits (wallet, seq);
  CREATE INDEX IF NOT EXISTS deposits_by_status ON deposits (chain_id, status, block_number);
  CREATE TABLE IF NOT EXISTS deposit_cursors (chain_id INTEGER PRIMARY KEY, next_block INTEGER NOT NULL);
`;

const KEY = 'chain_id = ? AND tx_hash = ? AND log_index = ?';

function keyParams(key: DepositKey): unknown[] {
  return [key.chainId, key.txHash, key.logIndex];
}

export class SqliteDepositStore implements DepositStore {
  constructor(private readonly db: SqliteConnection) {}

  async recordSeen(deposits: SeenDeposit[], now: number): Promise<number> {
    let added = 0;
    for (const deposit of deposits) {
      const [known] = await this.db.all<DepositRow>(`SELECT * FROM deposits WHERE ${KEY}`, keyParams(deposit));
      if (!known) {
        await this.db.run(
          `INSERT INTO deposits (chain_id, tx_hash, log_index, block_number, block_hash, token, wallet, amount, status, seen_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
          [...keyParams(deposit), deposit.blockNumber, deposit.blockHash, deposit.token, deposit.wallet, deposit.amount.toString(), now],
        );
        added++;
      } else if (known.status !== 'credited' && (known.status === 'reorged' || known.block_hash !== deposit.blockHash)) {
        await this.db.run(`UPDATE deposits SET block_number = ?, block_hash = ?, status = 'pending' WHERE ${KEY}`, [
          deposit.blockNumber,
          deposit.blockHash,
          ...keyParams(deposit),
        ]);
      }
    }
    return added;
  }

  async pending(chainId: number): Promise<DepositRecord[]> {
    const rows = await this.db.all<DepositRow>(
      `SELECT * FROM deposits WHERE chain_id = ? AND status = 'pending' ORDER BY block_number, log_index`,
      [chainId],
    );
    return rows.map(toDepositRecord);
  }

  async markCredited(key: DepositKey, credits: number, now: number): Promise<void> {
    await this.db.run(`UPDATE deposits SET status = 'credited', credits = ?, credited_at = ? WHERE ${KEY}`, [
      credits,
      now,
      ...keyParams(key),
    ]);
  }

  async markReorged(key: DepositKey, blockHash: string): Promise<void> {
    await this.db.run(`UPDATE deposits SET status = 'reorged' WHERE ${KEY} AND status = 'pending' AND block_hash = ?`, [
      ...keyParams(key),
      blockHash,
    ]);
  }

  async forWallet(wallet: string, options: { limit: number; beforeSeq?: number }): Promise<DepositRecord[]> {
    const rows = await this.db.all<DepositRow>('SELECT * FROM deposits WHERE wallet = ? AND seq < ? ORDER BY seq DESC LIMIT ?', [
      wallet.toLowerCase(),
      options.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      options.limit,
    ]);
    return rows.map(toDepositRecord);
  }

  async cursor(chainId: number): Promise<number | undefined> {
    const [row] = await this.db.all<{ next_block: number }>('SELECT next_block FROM deposit_cursors WHERE chain_id = ?', [chainId]);
    return row?.next_block;
  }

  async saveCursor(chainId: number, nextBlock: number): Promise<void> {
    await this.db.run(
      `INSERT INTO deposit_cursors (chain_id, next_block) VALUES (?, ?)
       ON CONFLICT (chain_id) DO UPDATE SET next_block = max(next_block, excluded.next_block)`,
      [chainId, nextBlock],
    );
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** Open a connection of its own to the store file and create the tables. */
export async function openSqliteDepositStore(file: string): Promise<SqliteDepositStore> {
  const db = await openSqlite(file);
  try {
    await db.exec(SCHEMA);
  } catch (err) {
    await db.close();
    throw err;
  }
  return new SqliteDepositStore(db);
}
