/**
 * Everything the gateway needs about accounts, opened in the right order: the DATA_DIR lock
 * first (so no second process ever opens the store), then the ledger on its SQLite file (which
 * migrates a Keyv-era ledger), then the move of an older DATA_DIR's keys to their own file, then
 * the store (Keyv: API keys, in that file). `close()` undoes it after the ledger's last commit.
 *
 * @example
 *   const accounts = await openAccounts({ dataDir: './data', publicUrl, settings: config.accounts, responses: config.responses })
 *   await accounts.ledger.balance(wallet)
 *   await accounts.close()
 */
import { acquireDataDirLock } from './data-dir-lock.js';
import { openStore, STORE_FILE, type AccountsStore } from './store.js';
import { openEmbeddedLedger, type EmbeddedLedger } from './embedded-ledger.js';
import { openSqlite } from './sqlite-connection.js';
import { moveKeysToOwnFile } from './keys-file-move.js';
import { join } from 'node:path';
import { ApiKeys } from './api-keys.js';
import { KeyvKeyStore } from './keyv-key-store.js';
import { SiweVerifier } from './siwe.js';
import type { ChainClient } from '../../chains/chain-client.js';
import { sweepEvery, type ResponseQuota, type ResponseStore } from './response-store.js';
import { openSqliteResponseStore } from './sqlite-response-store.js';
import { openSqliteX402PaymentRecords, type X402PaymentRecords } from './x402-payment-records.js';

export interface AccountsSettings {
  reservationTtlMs: number;
  nonceTtlMs: number;
  siweRpcUrl?: string;
}

/** Stored responses (POST /v1/responses): the per-wallet quota and how often expired ones are swept. */
export interface ResponseStoreSettings extends ResponseQuota {
  sweepIntervalMs: number;
}

export interface Accounts {
  ledger: EmbeddedLedger;
  apiKeys: ApiKeys;
  siwe: SiweVerifier;
  store: AccountsStore;
  /** Stored responses, in the ledger's SQLite file (switchyard.sqlite), on its connection. */
  responses: ResponseStore;
  /** x402 payments sent for settlement (their table in the ledger's SQLite file). */
  paymentRecords: X402PaymentRecords;
  /** /health's check: a read of the keys' file and a commit on the ledger's; rejects when either fails. */
  probe(): Promise<void>;
  close(): Promise<void>;
}

export async function openAccounts(options: {
  dataDir: string;
  publicUrl: string;
  settings: AccountsSettings;
  /** The chain SIWE checks smart-account signatures on (SIWE_RPC_URL); none: they are refused. */
  siweChain?: ChainClient;
  responses: ResponseStoreSettings;
  /** Where a failed last_used_at write goes (the logger). */
  onTouchError?: (err: unknown) => void;
  /** Where a failed sweep of expired responses goes (the logger). */
  onSweepError?: (err: unknown) => void;
}): Promise<Accounts> {
  const lock = acquireDataDirLock(options.dataDir);
  // What is open so far, undone last-first by close() or by a failed open (as cluster-accounts.ts does).
  const undo: Array<() => void | Promise<void>> = [];
  const closeAll = async () => {
    try {
      for (const step of undo.reverse()) await step();
    } finally {
      lock.release();
    }
  };
  try {
    const db = await openSqlite(join(options.dataDir, STORE_FILE));
    undo.push(() => db.close());
    const ledger = await openEmbeddedLedger(db, { reservationTtlMs: options.settings.reservationTtlMs });
    undo.push(() => ledger.stop()); // before the connection closes: its last commit goes first
    await moveKeysToOwnFile(db, options.dataDir);
    const store = await openStore(options.dataDir);
    undo.push(() => store.close());
    const responses = await openSqliteResponseStore(db, options.responses);
    const paymentRecords = await openSqliteX402PaymentRecords(db);
    undo.push(sweepEvery(responses, options.responses.sweepIntervalMs, options.onSweepError ?? (() => {})));
    let closing: Promise<void> | undefined;
    return {
      ledger,
      apiKeys: new ApiKeys(new KeyvKeyStore(store.keys), { onTouchError: options.onTouchError }),
      siwe: new SiweVerifier({
        publicUrl: options.publicUrl,
        nonceTtlMs: options.settings.nonceTtlMs,
        chain: options.siweChain,
      }),
      store,
      responses,
      paymentRecords,
      async probe() {
        // Any key will do: the read must reach the keys' SQLite file and come back.
        await Promise.all([store.keys.get('health:probe'), ledger.probe()]);
      },
      close() {
        closing ??= closeAll();
        return closing;
      },
    };
  } catch (err) {
    await closeAll().catch(() => {});
    throw err;
  }
}
