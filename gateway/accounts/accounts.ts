/**
 * Everything the gateway needs about accounts, opened in the right order: the DATA_DIR lock
 * first (so no second process ever opens the store), then the store, then the ledger with its
 * expiry timer. `close()` undoes it in reverse.
 *
 * @example
 *   const accounts = await openAccounts({ dataDir: './data', publicUrl, settings: config.accounts })
 *   await accounts.ledger.balance(wallet)
 *   await accounts.close()
 */
import { acquireDataDirLock } from './data-dir-lock.js';
import { openStore, type AccountsStore } from './store.js';
import { openLedger, type KeyvLedger } from './ledger.js';
import { ApiKeys } from './api-keys.js';
import { KeyvKeyStore } from './keyv-key-store.js';
import { SiweVerifier } from './siwe.js';

export interface AccountsSettings {
  reservationTtlMs: number;
  nonceTtlMs: number;
  siweRpcUrl?: string;
}

export interface Accounts {
  ledger: KeyvLedger;
  apiKeys: ApiKeys;
  siwe: SiweVerifier;
  store: AccountsStore;
  close(): Promise<void>;
}

export async function openAccounts(options: {
  dataDir: string;
  publicUrl: string;
  settings: AccountsSettings;
  onSweepError?: (err: unknown) => void;
  /** Where a failed last_used_at write goes (the logger). */
  onTouchError?: (err: unknown) => void;
}): Promise<Accounts> {
  const lock = acquireDataDirLock(options.dataDir);
  let store: AccountsStore | undefined;
  try {
    store = await openStore(options.dataDir);
    const ledger = await openLedger(store, {
      reservationTtlMs: options.settings.reservationTtlMs,
      onSweepError: options.onSweepError,
    });
    const opened = store;
    let closing: Promise<void> | undefined;
    return {
      ledger,
      apiKeys: new ApiKeys(new KeyvKeyStore(store.keys), { onTouchError: options.onTouchError }),
      siwe: new SiweVerifier({
        publicUrl: options.publicUrl,
        nonceTtlMs: options.settings.nonceTtlMs,
        rpcUrl: options.settings.siweRpcUrl,
      }),
      store,
      close() {
        closing ??= (async () => {
          try {
            await ledger.stop();
            await opened.close();
          } finally {
            lock.release();
          }
        })();
        return closing;
      },
    };
  } catch (err) {
    await store?.close().catch(() => {});
    lock.release();
    throw err;
  }
}
