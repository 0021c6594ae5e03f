/**
 * A DATA_DIR written before the ledger had its own tables kept each wallet as one Keyv value
 * (`balances:<address>` → {credits, totals, holds, closed, grants}) and grant idempotency as
 * `idempotency:<key>`. At the first start on such a store these move, in one transaction, into
 * `ledger_wallets` and `ledger_grants`; open holds go back to their wallets (their process is gone,
 * as a TTL sweep would have found), and the old rows are removed so there is one source of truth.
 */
import { z } from 'zod';
import { hasTable, type SqliteConnection } from '../sqlite/sqlite-connection.js';

const MIGRATED = 'keyv_ledger_migrated';

const count = z.number().int().nonnegative();
const balanceSchema = z.object({ address: z.string(), credits: count, total_deposited: count, total_spent: count });
const keyvWalletSchema = z.object({
  value: z.object({
    credits: count,
    total_deposited: count,
    total_spent: count,
    holds: z.record(z.string(), z.object({ amount: count })).default({}),
    grants: z.record(z.string(), z.object({ at: z.number(), result: balanceSchema })).default({}),
  }),
});
const keyvGrantSchema = z.object({
  value: z.object({ wallet: z.string(), amount: count, result: balanceSchema.optional() }),
  expires: z.number().nullable().optional(),
});

interface GrantRow {
  key: string;
  wallet: string;
  amount: number;
  result: string;
  at: number;
}

export async function migrateKeyvLedger(db: SqliteConnection): Promise<void> {
  const done = await db.all<{ value: string }>('SELECT value FROM ledger_meta WHERE name = ?', [MIGRATED]);
  if (done.length > 0) return;
  const hasKeyv = await hasTable(db, 'keyv');
  const rows = hasKeyv
    ? await db.all<{ key: string; value: string }>(`SELECT key, value FROM keyv WHERE key LIKE 'balances:%' OR key LIKE 'idempotency:%'`)
    : [];
  const wallets: Array<[string, string]> = [];
  const grants = new Map<string, GrantRow>();
  const grantAmounts = new Map<string, { wallet: string; amount: number }>();
  for (const row of rows) {
    if (row.key.startsWith('idempotency:')) {
      const grant = keyvGrantSchema.parse(JSON.parse(row.value)).value;
      grantAmounts.set(row.key.slice('idempotency:'.length), { wallet: grant.wallet, amount: grant.amount });
      continue;
    }
    const address = row.key.slice('balances:'.length);
    const record = keyvWalletSchema.parse(JSON.parse(row.value)).value;
    const held = Object.values(record.holds).reduce((sum, hold) => sum + hold.amount, 0);
    wallets.push([
      address,
      JSON.stringify({ credits: record.credits + held, total_deposited: record.total_deposited, total_spent: record.total_spent }),
    ]);
    // The wallet record was the commit point of an idempotent grant: it holds the result.
    for (const [key, grant] of Object.entries(record.grants)) {
      grants.set(key, { key, wallet: address, amount: 0, result: JSON.stringify(grant.result), at: grant.at });
    }
  }
  for (const [key, row] of grants) {
    const amount = grantAmounts.get(key);
    if (amount && amount.wallet === row.wallet) row.amount = amount.amount;
    else grants.delete(key); // its index row expired: the grant is past its retry window
  }
  await db.exec('BEGIN IMMEDIATE');
  try {
    for (const [address, record] of wallets) {
      await db.run('INSERT OR REPLACE INTO ledger_wallets (address, record) VALUES (?, ?)', [address, record]);
    }
    for (const row of grants.values()) {
      await db.run('INSERT OR REPLACE INTO ledger_grants (key, wallet, amount, result, at) VALUES (?, ?, ?, ?, ?)', [
        row.key,
        row.wallet,
        row.amount,
        row.result,
        row.at,
      ]);
    }
    if (hasKeyv) await db.run(`DELETE FROM keyv WHERE key LIKE 'balances:%' OR key LIKE 'idempotency:%'`);
    await db.run('INSERT INTO ledger_meta (name, value) VALUES (?, ?)', [MIGRATED, `${wallets.length} wallets, ${grants.size} grants`]);
    await db.exec('COMMIT');
  } catch (err) {
    await db.exec('ROLLBACK').catch(() => {});
    throw err;
  }
}
