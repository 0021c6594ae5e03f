/**
 * Embedded mode's stores: one process owns a DATA_DIR and keeps everything there or in its memory.
 * Opened in order: the DATA_DIR lock first (so no second process ever opens the files), then the
 * ledger on its SQLite file (which migrates a Keyv-era ledger), then the move of an older
 * DATA_DIR's keys to their own file, then Keyv over that file (API keys), stored responses and
 * x402 records on the ledger's connection; the gateway adds the deposit records on a connection
 * of their own and keeps chat rounds, request budgets and SIWE nonces in memory. `close()` undoes
 * it after the ledger's last commit.
 *
 * @example
 *   const stores = await openEmbeddedStores(config, { logger, siweChain })
 *   await stores.ledger.balance(wallet)
 *   await stores.close()
 */
import { limitsFrom, type KeyLimits } from '../ledger/key-budgets.js';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { ChainClient } from '../../chains/chain-client.js';
import { acquireDataDirLock } from '../storage/data-dir-lock.js';
import { openStore, STORE_FILE, type KeyvStore } from '../storage/sqlite/keyv-store.js';
import { openSqlite } from '../storage/sqlite/sqlite-connection.js';
import { openSqliteResponseStore } from '../storage/sqlite/sqlite-response-store.js';
import { sqliteUsageHistory } from '../storage/sqlite/sqlite-usage-history.js';
import { sweepUsageEvery, type UsageHistory } from '../ledger/usage.js';
import { openSqliteX402PaymentRecords } from '../storage/sqlite/sqlite-x402-payment-records.js';
import { openSqliteDepositStore } from '../storage/sqlite/sqlite-deposit-store.js';
import { moveKeysToOwnFile } from '../storage/legacy/keys-file-move.js';
import { storeHealth } from '../storage/store-health.js';
import { openEmbeddedLedger, type EmbeddedLedger } from '../ledger/embedded-ledger.js';
import { ApiKeys } from '../keys/api-keys.js';
import { KeyvKeyStore } from '../keys/keyv-key-store.js';
import { SiweVerifier } from '../keys/siwe.js';
import { NonceStore } from '../keys/nonce-store.js';
import { sweepEvery, type ResponseStore, type ResponseStoreSettings } from '../responses/response-store.js';
import type { X402PaymentRecords } from '../x402/payment-records.js';
import type { DepositStore } from '../deposits/deposit-store.js';
import { MemoryKeptRounds } from '../chat/memory-kept-rounds.js';
import { memoryLimiters } from '../http/middleware/rate-limit.js';
import { UndoStack } from './undo-stack.js';
import type { StoreOpening, Stores } from './stores.js';

export interface DataDirOptions {
  dataDir: string;
  /** PUBLIC_URL: the SIWE domain and origin. */
  publicUrl: string;
  settings: Config['accounts'];
  /** The chain SIWE checks smart-account signatures on (SIWE_RPC_URL); none: they are refused. */
  siweChain?: ChainClient;
  responses: ResponseStoreSettings;
  /** Where a failed last_used_at write goes (the logger). */
  onTouchError?: (err: unknown) => void;
  /** Where a failed sweep of expired responses goes (the logger). */
  onSweepError?: (err: unknown) => void;
}

/** What one DATA_DIR holds, opened under its lock: the credits CLI opens this alone. */
export interface DataDirStores {
  ledger: EmbeddedLedger;
  /** The ledger's usage records (its SQLite file), read on its connection. */
  usage: UsageHistory;
  apiKeys: ApiKeys<KeyLimits>;
  /** SIWE proofs, their nonces in this process's memory (one process owns the DATA_DIR). */
  siwe: SiweVerifier;
  /** The API keys' file (Keyv), apart from the ledger's. */
  keysFile: KeyvStore;
  /** Stored responses, in the ledger's SQLite file (switchyard.sqlite), on its connection. */
  responses: ResponseStore;
  /** x402 payments sent for settlement (their table in the ledger's SQLite file). */
  paymentRecords: X402PaymentRecords;
  /** /health's check: a read of the keys' file and a commit on the ledger's; rejects when either fails. */
  probe(): Promise<void>;
  close(): Promise<void>;
}

function dataDirOptionsOf(config: Config): DataDirOptions {
  return { dataDir: config.dataDir, publicUrl: config.server.publicUrl, settings: config.accounts, responses: config.responses };
}

/** Take the DATA_DIR's lock (DataDirLocked when a live process holds it) and open what it holds, in the order above. */
export async function openDataDirStores(options: DataDirOptions): Promise<DataDirStores> {
  const lock = acquireDataDirLock(options.dataDir);
  const opened = new UndoStack();
  // The lock goes last, even when a step fails: the next start must find the DATA_DIR free.
  const closeAll = () => opened.undo().finally(() => lock.release());
  try {
    const db = await openSqlite(join(options.dataDir, STORE_FILE));
    opened.push(() => db.close());
    const ledger = await openEmbeddedLedger(db, { reservationTtlMs: options.settings.reservationTtlMs });
    opened.push(() => ledger.stop()); // before the connection closes: its last commit goes first
    await moveKeysToOwnFile(db, options.dataDir);
    const keysFile = await openStore(options.dataDir);
    opened.push(() => keysFile.close());
    const responses = await openSqliteResponseStore(db, options.responses);
    const paymentRecords = await openSqliteX402PaymentRecords(db);
    opened.push(sweepEvery(responses, options.responses.sweepIntervalMs, options.onSweepError ?? (() => {})));
    return {
      ledger,
      usage: sqliteUsageHistory(db),
      apiKeys: new ApiKeys<KeyLimits>(new KeyvKeyStore(keysFile.keys), {
        onTouchError: options.onTouchError,
        limitsOf: limitsFrom(ledger),
      }),
      siwe: new SiweVerifier({
        publicUrl: options.publicUrl,
        chain: options.siweChain,
        nonces: new NonceStore({ ttlMs: options.settings.nonceTtlMs }),
      }),
      keysFile,
      responses,
      paymentRecords,
      async probe() {
        // Any key will do: the read must reach the keys' SQLite file and come back.
        await Promise.all([keysFile.keys.get('health:probe'), ledger.probe()]);
      },
      close: closeAll,
    };
  } catch (err) {
    await closeAll().catch(() => {});
    throw err;
  }
}

/** The credits CLI's stores in embedded mode: the DATA_DIR's, with nothing that serves requests. */
export function openEmbeddedCliStores(config: Config): Promise<DataDirStores> {
  return openDataDirStores(dataDirOptionsOf(config));
}

/** Every store of embedded mode: the DATA_DIR's, the deposit records beside them, and this process's memory. */
export async function openEmbeddedStores(config: Config, { logger, siweChain }: StoreOpening): Promise<Stores> {
  const dataDir = await openDataDirStores({
    ...dataDirOptionsOf(config),
    siweChain,
    onTouchError: (err) => logger.warn({ err }, 'API key last_used_at write failed'),
    onSweepError: (err) => logger.error({ err }, 'expiry sweep failed (reservations or stored responses)'),
  });
  let deposits: DepositStore;
  try {
    deposits = await openSqliteDepositStore(join(config.dataDir, STORE_FILE));
  } catch (err) {
    await dataDir.close();
    throw err;
  }
  const { keptRoundsMaxEntries: maxEntries, keptRoundsMaxChars: maxChars } = config.chat;
  const stopUsageSweep = sweepUsageEvery(dataDir.usage, config.usage.retentionDays, (err) =>
    logger.error({ err }, 'usage records sweep failed'),
  );
  return {
    ledger: dataDir.ledger,
    usage: dataDir.usage,
    apiKeys: dataDir.apiKeys,
    siwe: dataDir.siwe,
    responses: dataDir.responses,
    paymentRecords: dataDir.paymentRecords,
    keptRounds: new MemoryKeptRounds({ maxEntries, maxChars }),
    deposits,
    watchLease: undefined,
    limiters: memoryLimiters,
    sharedChatSlots: undefined,
    health: storeHealth(dataDir),
    keysFile: dataDir.keysFile,
    close: async () => {
      stopUsageSweep();
      await deposits.close();
      await dataDir.close();
    },
  };
}
