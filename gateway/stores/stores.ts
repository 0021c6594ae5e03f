/**
 * Every store the gateway uses, in either mode, as one set: the composition root (server.ts)
 * chooses the mode once and opens it with `openEmbeddedStores` (embedded-stores.ts: DATA_DIR,
 * SQLite and this process's memory) or `openClusterStores` (cluster-stores.ts: PostgreSQL, and
 * Redis with REDIS_URL); `createApp` takes it whole. A new store is added here with an
 * implementation in each opener, never as an optional dependency that falls back to a default.
 *
 * @example
 *   const stores = isClusterConfig(config) ? await openClusterStores(config, opening) : await openEmbeddedStores(config, opening)
 *   const app = createApp({ …, stores })
 */
import type { KeyLimits } from '../ledger/key-budgets.js';
import type { ChainClient } from '../../chains/chain-client.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { HealthContributor } from '../health.js';
import type { Ledger } from '../ledger/ledger.js';
import type { UsageHistory } from '../ledger/usage.js';
import type { ApiKeys } from '../keys/api-keys.js';
import type { SiweVerifier } from '../keys/siwe.js';
import type { ResponseStore } from '../responses/response-store.js';
import type { X402PaymentRecords } from '../x402/payment-records.js';
import type { KeptRoundsStore } from '../chat/kept-rounds.js';
import type { DepositStore } from '../deposits/deposit-store.js';
import type { WatchLease } from '../deposits/deposit-watcher.js';
import type { LimiterFactory } from '../http/middleware/rate-limit.js';
import type { SharedWalletSlots } from '../http/middleware/chat-concurrency.js';
import type { KeyvStore } from '../storage/sqlite/keyv-store.js';

export interface Stores {
  /** The credit ledger: memory group-committed to SQLite (embedded), or PostgreSQL (cluster). */
  ledger: Ledger;
  /** The usage records the ledger writes with each step: read by GET /credits/usage, swept past `usage.retentionDays`. */
  usage: UsageHistory;
  /** API key records (Keyv in DATA_DIR, or PostgreSQL) behind the in-process key cache. */
  apiKeys: ApiKeys<KeyLimits>;
  /** SIWE proofs, with their nonces in this process's memory, or in Redis shared by every instance. */
  siwe: SiweVerifier;
  /** Stored responses (POST /v1/responses with `store: true`), swept of expired ones. */
  responses: ResponseStore;
  /** x402 payments sent for settlement, until credited or certainly unsettled. */
  paymentRecords: X402PaymentRecords;
  /** The gateway's rounds of chats that handed the client its calls: memory, Redis or PostgreSQL. */
  keptRounds: KeptRoundsStore;
  /** Deposit records and scan cursors. */
  deposits: DepositStore;
  /** Which instance scans each chain (cluster mode); none in embedded mode, where the one process scans every chain. */
  watchLease: WatchLease | undefined;
  /** Where request budgets count: this process's memory, or Redis for every instance together. */
  limiters: LimiterFactory;
  /**
   * Per-wallet chat slots shared by every instance (Redis); none where this instance counts its own
   * (embedded mode, cluster mode without Redis), as it also does while Redis is down.
   */
  sharedChatSlots: SharedWalletSlots | undefined;
  /** The stores' part of /health (`store`, and in cluster mode `postgres` and `redis`). */
  health: HealthContributor;
  /** The DATA_DIR's file of API keys (embedded mode; tests break it to see /health go down); none in cluster mode. */
  keysFile: KeyvStore | undefined;
  /** Close everything, last opened first (the ledger's last commit before its connection). */
  close(): Promise<void>;
}

/** What the openers are handed besides the config: where their failures are logged, and the parts the composition root builds. */
export interface StoreOpening {
  logger: Logger;
  /** The chain SIWE checks smart-account signatures on (SIWE_RPC_URL, on SIWE_READ_POLICY); none: they are refused. */
  siweChain: ChainClient | undefined;
}

/** What the credits CLI opens: the ledger alone, without Redis and nothing that serves requests. */
export interface CliStores {
  ledger: Ledger;
  usage: UsageHistory;
  close(): Promise<void>;
}

/** A config in cluster mode: DATABASE_URL is set. */
export type ClusterConfig = Config & { cluster: { databaseUrl: string } };

/** The mode switch: DATABASE_URL set is cluster mode, none is embedded mode. */
export function isClusterConfig(config: Config): config is ClusterConfig {
  return config.cluster.databaseUrl !== undefined;
}
