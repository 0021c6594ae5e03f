/**
 * The API keys' store: Keyv over its own SQLite file in DATA_DIR (KEYS_FILE), holding the API keys
 * (one Keyv namespace). The ledger needs transactions, which Keyv lacks, so it keeps its tables in
 * another file (STORE_FILE, with stored responses, x402 and deposit records) written through
 * better-sqlite3 (sqlite-connection.ts). Each file is written by one SQLite library only: Keyv's
 * driver (sqlite3) and better-sqlite3 each bundle their own copy of SQLite, and two copies in one
 * process do not see each other's locks (POSIX locks are per process), so writes of both to one
 * file interleave and lose commits or corrupt it (https://www.sqlite.org/howtocorrupt.html,
 * 2.2.1; legacy/keys-file-move.ts moves the keys of an older DATA_DIR out). Correctness across records
 * comes from the DATA_DIR lock plus per-key serialization in this process.
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

/** The ledger's file (better-sqlite3 only). */
export const STORE_FILE = 'switchyard.sqlite';
/** The API keys' file (Keyv's sqlite3 driver only). */
export const KEYS_FILE = 'keys.sqlite';

export interface KeyvStore {
  /** API key records by SHA-256 hex, plus `wallet:<address>` indexes. */
  keys: Keyv;
  close(): Promise<void>;
}

export type Namespace = 'keys';

/** Open (creating if needed) the keys' SQLite file under `dataDir`. */
export async function openStore(dataDir: string): Promise<KeyvStore> {
  mkdirSync(dataDir, { recursive: true });
  const adapter = new KeyvSqlite({ uri: `sqlite://${join(dataDir, KEYS_FILE)}`, busyTimeout: 5_000 });
  // WAL + NORMAL: a crash of this process loses nothing committed, and each write costs no fsync
  // of the main file (a key's creation, revocation or last_used_at waits for no journal round trip).
  await adapter.query('PRAGMA journal_mode=WAL');
  await adapter.query('PRAGMA synchronous=NORMAL');
  // Keyv prefixes keys with its own namespace, so one adapter (one connection) serves them all;
  // errors must reach the caller: a key store that silently reads "nothing" would refuse good keys.
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
