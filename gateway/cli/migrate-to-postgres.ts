/**
 * `npm run credits -- migrate-to-postgres`: copy an embedded DATA_DIR's API keys and balances
 * into the PostgreSQL of DATABASE_URL, once. The embedded store is read through its own classes
 * (openEmbeddedCliStores takes the DATA_DIR lock, so no gateway can be writing it meanwhile; stop it
 * first): keys with KeyvKeyStore.list for every wallet index Keyv holds, balances with the
 * embedded ledger's balance() for every wallet its table names (the one raw read: the list of
 * addresses, which the Ledger contract has no call for). Everything lands in one transaction; a
 * key or wallet already in PostgreSQL is left as it is and counted as skipped, so running it
 * again copies nothing twice.
 *
 * Holds still open in the embedded store belonged to a gateway that is stopped: their credits go
 * back to the wallet (credits + held), so total_deposited = credits + total_spent on arrival.
 * Grant idempotency records are copied with the balance each grant answered, so a grant retried
 * with its key after the move answers as before instead of granting twice.
 * The permanent records of outside payments (deposits, x402) and the remainders below one credit
 * are copied, so a payment credited before the move still counts once after it; so are the deposit
 * records and scan cursors, so a deposit seen but not yet credited is credited after the move; so
 * are the x402 payment records, so a settlement still pending is reconciled after the move; and so
 * are API keys' limits with their spend counters (lifetime and the UTC day's), so a capped key
 * stays capped, with what it already spent counted, after the move; and so are the usage records
 * (read in slices, in the order they were written; one already in PostgreSQL, by its id, is skipped).
 *
 * @example
 *   DATA_DIR=./data DATABASE_URL=postgres://… npm run credits -- migrate-to-postgres
 *   // {"keys":{"copied":3,"skipped":0},"wallets":{"copied":2,"skipped":0},"credits":147,"grants":{"copied":2,"skipped":0},
 *   //  "externalCredits":{"copied":1,"skipped":0},"deposits":{"copied":1,"skipped":0},"x402Payments":{"copied":0,"skipped":0},
 *   //  "usageRecords":{"copied":41,"skipped":0}}
 */
import { z } from 'zod';
import type { Config } from '../config.js';
import { join } from 'node:path';
import { openEmbeddedCliStores } from '../stores/embedded-stores.js';
import { storedLimitsSchema, type ExternalRow, type KeyLimitsRow } from '../ledger/embedded-ledger.js';
import { STORE_FILE } from '../storage/sqlite/keyv-store.js';
import { hasTable, openSqlite } from '../storage/sqlite/sqlite-connection.js';
import { KeyvKeyStore } from '../keys/keyv-key-store.js';
import type { ApiKeyRecord } from '../keys/key-store.js';
import type { Balance } from '../ledger/ledger.js';
import type { DepositRow } from '../storage/deposit-rows.js';
import { openDatabase, type Sql } from '../storage/postgres/database.js';
import type { UsageRow } from '../ledger/usage.js';
import { migrate } from '../storage/postgres/migrate.js';
import type { X402PaymentRow } from '../storage/x402-payment-rows.js';

export interface MigrationReport {
  keys: { copied: number; skipped: number };
  wallets: { copied: number; skipped: number };
  /** Spendable credits copied (open holds included, see the file comment). */
  credits: number;
  /** Idempotency records of grants (a retried grant repeats its first answer). */
  grants: { copied: number; skipped: number };
  /** Outside payments' permanent records (remainders travel with them). */
  externalCredits: { copied: number; skipped: number };
  /** Deposit records (scan cursors travel with them). */
  deposits: { copied: number; skipped: number };
  /** x402 payments sent for settlement (pending ones are reconciled from PostgreSQL afterwards). */
  x402Payments: { copied: number; skipped: number };
  /** API keys' limits and spend counters. */
  keyLimits: { copied: number; skipped: number };
  /** Usage records (GET /credits/usage). */
  usageRecords: { copied: number; skipped: number };
}

/** Usage records read from SQLite and inserted per statement. */
const USAGE_SLICE = 2_000;

const WALLET_INDEX = 'wallet:';

/** The balance an embedded grant answered, as its record keeps it. */
const grantAnswer = z.object({ credits: z.number().int(), total_deposited: z.number().int(), total_spent: z.number().int() });

/**
 * What the embedded ledger stored that its contract has no call to list (opened by openEmbeddedCliStores
 * first, so its tables exist): every wallet, every outside payment, every remainder, every x402 payment record.
 */
async function ledgerRows(dataDir: string) {
  const db = await openSqlite(join(dataDir, STORE_FILE));
  try {
    return {
      addresses: (await db.all<{ address: string }>('SELECT address FROM ledger_wallets ORDER BY address')).map((row) => row.address),
      grants: await db.all<{ key: string; wallet: string; amount: number; result: string; at: number }>(
        'SELECT * FROM ledger_grants ORDER BY at',
      ),
      externalCredits: await db.all<ExternalRow>('SELECT * FROM ledger_external_credits'),
      remainders: await db.all<{ wallet: string; remainder_key: string; units: string }>('SELECT * FROM ledger_remainders'),
      // A store no gateway with deposits has opened has no deposit tables.
      ...((await hasTable(db, 'deposits'))
        ? {
            deposits: await db.all<DepositRow>('SELECT * FROM deposits ORDER BY seq'),
            cursors: await db.all<{ chain_id: number; next_block: number }>('SELECT * FROM deposit_cursors'),
          }
        : { deposits: [], cursors: [] }),
      x402Payments: await db.all<X402PaymentRow>('SELECT * FROM x402_payments ORDER BY seq'),
      keyLimits: await db.all<KeyLimitsRow>('SELECT * FROM ledger_key_limits'),
    };
  } finally {
    await db.close();
  }
}

export async function migrateToPostgres(config: Config, databaseUrl: string): Promise<MigrationReport> {
  const embedded = await openEmbeddedCliStores(config);
  try {
    const keyStore = new KeyvKeyStore(embedded.keysFile.keys);
    const owners: string[] = [];
    for await (const [name] of embedded.keysFile.keys.iterator!(undefined)) {
      if (typeof name === 'string' && name.startsWith(WALLET_INDEX)) owners.push(name.slice(WALLET_INDEX.length));
    }
    const keys: Array<{ hash: string; record: ApiKeyRecord }> = [];
    for (const owner of owners) keys.push(...(await keyStore.list(owner)));
    const balances: Balance[] = [];
    const stored = await ledgerRows(config.dataDir);
    for (const wallet of stored.addresses) balances.push(await embedded.ledger.balance(wallet));

    const db = await openDatabase(databaseUrl);
    try {
      await migrate(db.sql);
      return await db.sql.begin(async (tx) => {
        const report: MigrationReport = {
          keys: { copied: 0, skipped: 0 },
          wallets: { copied: 0, skipped: 0 },
          credits: 0,
          grants: { copied: 0, skipped: 0 },
          externalCredits: { copied: 0, skipped: 0 },
          deposits: { copied: 0, skipped: 0 },
          x402Payments: { copied: 0, skipped: 0 },
          keyLimits: { copied: 0, skipped: 0 },
          usageRecords: { copied: 0, skipped: 0 },
        };
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
        for (const row of stored.grants) {
          const answered = grantAnswer.parse(JSON.parse(row.result));
          const inserted = await tx`
            insert into grants (idempotency_key, wallet, amount, granted_at, credits, total_deposited, total_spent)
            values (${row.key}, ${row.wallet}, ${row.amount}::bigint, ${row.at}::bigint, ${answered.credits}::bigint,
              ${answered.total_deposited}::bigint, ${answered.total_spent}::bigint)
            on conflict do nothing returning idempotency_key`;
          report.grants[inserted.length === 1 ? 'copied' : 'skipped']++;
        }
        for (const row of stored.externalCredits) {
          const inserted = await tx`
            insert into external_credits (source, external_id, wallet, units, units_per_credit, remainder_key, credits, remainder, credited_at)
            values (${row.source}, ${row.external_id}, ${row.wallet}, ${row.units}::numeric, ${row.units_per_credit}::numeric,
              ${row.remainder_key}, ${row.credits}::bigint, ${row.remainder}::numeric, ${row.at}::bigint)
            on conflict do nothing returning source`;
          report.externalCredits[inserted.length === 1 ? 'copied' : 'skipped']++;
        }
        for (const row of stored.remainders) {
          await tx`
            insert into credit_remainders (wallet, remainder_key, units) values (${row.wallet}, ${row.remainder_key}, ${row.units}::numeric)
            on conflict do nothing`;
        }
        for (const row of stored.deposits) {
          const inserted = await tx`
            insert into deposits (chain_id, tx_hash, log_index, block_number, block_hash, token, wallet, amount, status, credits, seen_at, credited_at)
            values (${row.chain_id}::bigint, ${row.tx_hash}, ${row.log_index}, ${row.block_number}::bigint, ${row.block_hash}, ${row.token},
              ${row.wallet}, ${row.amount}::numeric, ${row.status}, ${row.credits}::bigint, ${row.seen_at}::bigint, ${row.credited_at}::bigint)
            on conflict do nothing returning seq`;
          report.deposits[inserted.length === 1 ? 'copied' : 'skipped']++;
        }
        for (const row of stored.cursors) {
          await tx`
            insert into deposit_cursors (chain_id, next_block) values (${row.chain_id}::bigint, ${row.next_block}::bigint)
            on conflict (chain_id) do update set next_block = greatest(deposit_cursors.next_block, excluded.next_block)`;
        }
        for (const row of stored.x402Payments) {
          const inserted = await tx`
            insert into x402_payments (id, wallet, network, asset, amount, nonce, signature, valid_before, from_block, pay_to, units_per_credit, state, tx)
            values (${row.id}, ${row.wallet}, ${row.network}, ${row.asset}, ${row.amount}::numeric, ${row.nonce}, ${row.signature},
              ${row.valid_before}::bigint, ${row.from_block}::numeric, ${row.pay_to}, ${row.units_per_credit}::numeric, ${row.state}, ${row.tx})
            on conflict do nothing returning id`;
          report.x402Payments[inserted.length === 1 ? 'copied' : 'skipped']++;
        }
        for (const row of stored.keyLimits) {
          const limits = storedLimitsSchema.parse(JSON.parse(row.limits));
          const inserted = await tx`
            insert into key_limits (key_id, wallet, max_credits, max_credits_per_day, expires_at, tools, models, spent, day, day_spent)
            values (${row.key_id}, ${row.wallet}, ${limits.maxCredits}, ${limits.maxCreditsPerDay}, ${limits.expiresAt},
              ${limits.tools}, ${limits.models}, ${row.spent}::bigint, ${row.day}, ${row.day_spent}::bigint)
            on conflict do nothing returning key_id`;
          report.keyLimits[inserted.length === 1 ? 'copied' : 'skipped']++;
        }
        report.usageRecords = await copyUsageRecords(tx as unknown as Sql, config.dataDir);
        return report;
      });
    } finally {
      await db.close();
    }
  } finally {
    await embedded.close();
  }
}

/** Every usage record of the DATA_DIR, slice by slice in the order written; one whose id PostgreSQL holds is skipped. */
async function copyUsageRecords(tx: Sql, dataDir: string): Promise<{ copied: number; skipped: number }> {
  const db = await openSqlite(join(dataDir, STORE_FILE));
  const counts = { copied: 0, skipped: 0 };
  try {
    // A store written before usage records has the table too: the embedded ledger created it when opened above.
    for (let after = -1; ;) {
      const rows = await db.all<UsageRow & { seq: number }>('SELECT * FROM usage_records WHERE seq > ? ORDER BY seq LIMIT ?', [
        after,
        USAGE_SLICE,
      ]);
      if (rows.length === 0) return counts;
      after = rows[rows.length - 1].seq;
      const column = <K extends keyof UsageRow>(key: K) => rows.map((row) => row[key]);
      // unnest keeps the slice's order, so PostgreSQL's seq orders records of one ms as SQLite did.
      const inserted = await tx`
        insert into usage_records (id, wallet, at, kind, request_id, key_id, model, tools, prompt_tokens, completion_tokens, credits, source_id)
        select x.id, x.wallet, x.at, x.kind, x.request_id, x.key_id, x.model, x.tools::jsonb, x.prompt_tokens, x.completion_tokens, x.credits, x.source_id
        from unnest(${column('id')}::text[], ${column('wallet')}::text[], ${column('at').map(String)}::bigint[], ${column('kind')}::text[],
          ${column('request_id')}::text[], ${column('key_id')}::text[], ${column('model')}::text[], ${column('tools')}::text[],
          ${column('prompt_tokens').map(String)}::bigint[], ${column('completion_tokens').map(String)}::bigint[],
          ${column('credits').map(String)}::bigint[], ${column('source_id')}::text[])
          with ordinality as x(id, wallet, at, kind, request_id, key_id, model, tools, prompt_tokens, completion_tokens, credits, source_id, n)
        where not exists (select 1 from usage_records u where u.wallet = x.wallet and u.at = x.at and u.id = x.id)
        order by x.n
        returning 1`;
      counts.copied += inserted.length;
      counts.skipped += rows.length - inserted.length;
    }
  } finally {
    await db.close();
  }
}
