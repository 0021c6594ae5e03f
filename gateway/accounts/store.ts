/**
 * The accounts store: Keyv over one SQLite file in DATA_DIR, one Keyv namespace per kind of
 * record. Keyv has no transactions, so each record that must change atomically (a wallet's
 * balance with its open reservations) is a single value; correctness across records comes from
 * the DATA_DIR lock plus per-key serialization in this process.
 *
 * @example
 *   const store = await openStore('./data')
 *   await store.balances.get('0xabc…')
 *   await store.close()
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Keyv from 'keyv';
import KeyvSqlite from '@keyv/sqlite';

export const STORE_FILE = 'switchyard.sqlite';

export interface AccountsStore {
  /** API key records by SHA-256 hex, plus `wallet:<address>` indexes. */
  keys: Keyv;
  /** One record per wallet: balance, open reservations, recent outcomes. */
  balances: Keyv;
  /** Idempotency-Key → the first result of an admin grant. */
  idempotency: Keyv;
  /** Every key stored in a namespace (startup scans; small tables only). */
  keysIn(namespace: Namespace): Promise<string[]>;
  close(): Promise<void>;
}

export type Namespace = 'keys' | 'balances' | 'idempotency';

/** Open (creating if needed) the SQLite store under `dataDir`. */
export async function openStore(dataDir: string): Promise<AccountsStore> {
  mkdirSync(dataDir, { recursive: true });
  const adapter = new KeyvSqlite({ uri: `sqlite://${join(dataDir, STORE_FILE)}`, busyTimeout: 5_000 });
  // WAL + NORMAL: a crash of this process loses nothing committed, and each write costs no fsync
  // of the main file. Without it every ledger step waits for a full journal round trip.
  await adapter.query('PRAGMA journal_mode=WAL');
  await adapter.query('PRAGMA synchronous=NORMAL');
  // SIWE nonces now live in memory (accounts/nonce-store.ts); rows an older version left here
  // would never expire (Keyv deletes an expired row only when it is read).
  await adapter.query(`DELETE FROM keyv WHERE key LIKE 'nonces:%'`);
  // Keyv prefixes keys with its own namespace, so one adapter (one connection) serves them all;
  // errors must reach the caller: a ledger that silently reads "nothing" would lose money.
  const open = (namespace: Namespace) => new Keyv({ store: adapter, namespace, throwOnErrors: true });
  const store = {
    keys: open('keys'),
    balances: open('balances'),
    idempotency: open('idempotency'),
  };
  let closed: Promise<void> | undefined;
  return {
    ...store,
    async keysIn(namespace) {
      const rows = (await adapter.query(`SELECT key FROM keyv WHERE key LIKE ?`, `${namespace}:%`)) as Array<{ key: string }>;
      return rows.map((row) => row.key.slice(namespace.length + 1));
    },
    close() {
      closed ??= adapter.disconnect();
      return closed;
    },
  };
}
