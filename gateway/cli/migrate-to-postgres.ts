/**
 * `npm run credits -- migrate-to-postgres`: copy an embedded DATA_DIR's API keys and balances
 * into the PostgreSQL of DATABASE_URL, once. The embedded store is read through its own classes
 * (openAccounts takes the DATA_DIR lock, so no gateway can be writing it meanwhile; stop it
 * first): keys with KeyvKeyStore.list for every wallet index Keyv holds, balances with the
 * embedded ledger's balance() for every wallet its table names (the one raw read: the list of
 * addresses, which the Ledger contract has no call for). Everything lands in one transaction; a
 * key or wallet already in PostgreSQL is left as it is and counted as skipped, so running it
 * again copies nothing twice.
 *
 * Holds still open in the embedded store belonged to a gateway that is stopped: their credits go
 * back to the wallet (credits + held), so total_deposited = credits + total_spent on arrival.
 * Grant idempotency records are not copied (a retried grant from before the move is a new grant).
 *
 * @example
 *   DATA_DIR=./data DATABASE_URL=postgres://… npm run credits -- migrate-to-postgres
 *   // {"keys":{"copied":3,"skipped":0},"wallets":{"copied":2,"skipped":0},"credits":147}
 */
import type { Config } from '../config.js';
import { join } from 'node:path';
import { openAccounts } from '../accounts/accounts.js';
import { STORE_FILE } from '../accounts/store.js';
import { openSqlite } from '../accounts/sqlite-connection.js';
import { KeyvKeyStore } from '../accounts/keyv-key-store.js';
import type { ApiKeyRecord, Balance } from '../accounts/types.js';
import { openDatabase } from '../accounts/postgres/database.js';
import { migrate } from '../accounts/postgres/migrate.js';

export interface MigrationReport {
  keys: { copied: number; skipped: number };
  wallets: { copied: number; skipped: number };
  /** Spendable credits copied (open holds included, see the file comment). */
  credits: number;
}

const WALLET_INDEX = 'wallet:';

/** Every wallet the embedded ledger has stored (opened by openAccounts first, so its table exists). */
async function ledgerAddresses(dataDir: string): Promise<string[]> {
  const db = await openSqlite(join(dataDir, STORE_FILE));
  try {
    return (await db.all<{ address: string }>('SELECT address FROM ledger_wallets ORDER BY address')).map((row) => row.address);
  } finally {
    await db.close();
  }
}

export async function migrateToPostgres(config: Config, databaseUrl: string): Promise<MigrationReport> {
  const accounts = await openAccounts({
    dataDir: config.dataDir,
    publicUrl: config.server.publicUrl,
    settings: config.accounts,
    responses: config.responses,
  });
  try {
    const keyStore = new KeyvKeyStore(accounts.store.keys);
    const owners: string[] = [];
    for await (const [name] of accounts.store.keys.iterator!(undefined)) {
      if (typeof name === 'string' && name.startsWith(WALLET_INDEX)) owners.push(name.slice(WALLET_INDEX.length));
    }
    const keys: Array<{ hash: string; record: ApiKeyRecord }> = [];
    for (const owner of owners) keys.push(...(await keyStore.list(owner)));
    const balances: Balance[] = [];
    for (const wallet of await ledgerAddresses(config.dataDir)) balances.push(await accounts.ledger.balance(wallet));

    const db = await openDatabase(databaseUrl);
    try {
      await migrate(db.sql);
      return await db.sql.begin(async (tx) => {
        const report: MigrationReport = { keys: { copied: 0, skipped: 0 }, wallets: { copied: 0, skipped: 0 }, credits: 0 };
        for (const { hash, record } of keys) {
          const inserted = await tx`
            insert into api_keys (hash, id, address, name, created_at, last_used_at, verified, prefix)
            values (${hash}, ${record.id}, ${record.address}, ${record.name}, ${record.created_at}::bigint,
              ${record.last_used_at}::bigint, ${record.verified}, ${record.prefix})
            on conflict do nothing returning hash`;
          report.keys[inserted.length === 1 ? 'copied' : 'skipped']++;
        }
        for (const balance of balances) {
          const spendable = balance.total_deposited - balance.total_spent;
          const inserted = await tx`
            insert into wallets (address, credits, total_deposited, total_spent)
            values (${balance.address}, ${spendable}::bigint, ${balance.total_deposited}::bigint, ${balance.total_spent}::bigint)
            on conflict do nothing returning address`;
          if (inserted.length === 1) {
            report.wallets.copied++;
            report.credits += spendable;
          } else {
            report.wallets.skipped++;
          }
        }
        return report;
      });
    } finally {
      await db.close();
    }
  } finally {
    await accounts.close();
  }
}
