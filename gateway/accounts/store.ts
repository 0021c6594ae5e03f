/**
 * The accounts store: Keyv over one SQLite file in DATA_DIR, holding the API keys (one Keyv
 * namespace). The ledger needs transactions, which Keyv lacks, so it keeps its own tables in the
 * same file on its own connection (embedded-ledger.ts); correctness across records comes from the
 * DATA_DIR lock plus per-key serialization in this process.
 *
 * @example
 *   const store = await openStore('./data')
 *   await store.keys.get('wallet:0xabc…')
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
  close(): Promise<void>;
}

export type Namespace = 'keys';

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
  };
  let closed: Promise<void> | undefined;
  return {
    ...store,
    close() {
      closed ??= adapter.disconnect();
      return closed;
    },
  };
}
