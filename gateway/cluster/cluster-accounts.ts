/**
 * Cluster mode's accounts, opened in order: PostgreSQL (checked, then migrated under the advisory
 * lock), Redis when configured, then the ledger's expiry timer, the key cache's invalidation,
 * nonces, chat leases, and the store of kept chat rounds (Redis when configured, else PostgreSQL
 * with its sweep). Any number of gateways open the same; nothing here takes a DATA_DIR
 * lock. A store down at start is StoreUnavailable naming it (main.ts exits 1 with the message).
 * `close()` undoes it in reverse.
 *
 * @example
 *   const accounts = await openClusterAccounts({ databaseUrl, redisUrl, redisPrefix: 'switchyard:', publicUrl, settings })
 */
import type { AccountsSettings, ResponseStoreSettings } from '../accounts/accounts.js';
import { sweepEvery, type ResponseStore } from '../accounts/response-store.js';
import { PostgresResponseStore } from '../accounts/postgres/postgres-response-store.js';
import { ApiKeys } from '../accounts/api-keys.js';
import { SiweVerifier } from '../accounts/siwe.js';
import type { ChainClient } from '../../chains/chain-client.js';
import { openDatabase, type Database } from '../accounts/postgres/database.js';
import { migrate } from '../accounts/postgres/migrate.js';
import { PostgresLedger } from '../accounts/postgres/postgres-ledger.js';
import { PostgresKeyStore } from '../accounts/postgres/postgres-key-store.js';
import { PostgresX402PaymentRecords } from '../accounts/postgres/postgres-x402-payment-records.js';
import type { HealthContributor } from '../health.js';
import { PostgresDepositStore } from '../deposits/postgres-deposit-store.js';
import { openSharedRedis, type SharedRedis } from './shared-redis.js';
import { RedisNonces } from './redis-nonces.js';
import { redisLimiters } from './redis-rate-limits.js';
import { ChatLeases } from './chat-leases.js';
import { keepKeyCachesHonest } from './key-invalidation.js';
import { clusterHealth } from './cluster-health.js';
import { RedisKeptRounds } from './redis-kept-rounds.js';
import { PostgresKeptRounds } from '../accounts/postgres/postgres-kept-rounds.js';

export interface ClusterAccounts {
  ledger: PostgresLedger;
  apiKeys: ApiKeys;
  siwe: SiweVerifier;
  health: HealthContributor;
  /** Stored responses on PostgreSQL, swept of expired ones by every instance. */
  responses: ResponseStore;
  /** Deposit records and cursors (every instance's watchers share them). */
  deposits: PostgresDepositStore;
  paymentRecords: PostgresX402PaymentRecords;
  /** What every instance shares through Redis; undefined without REDIS_URL (then per instance). */
  shared?: { limiters: ReturnType<typeof redisLimiters>; chatSlots: ChatLeases };
  /** Where the chat loop keeps its rounds for the client's continuation (chat/kept-rounds.ts). */
  keptRounds: RedisKeptRounds | PostgresKeptRounds;
  /** Migrations applied by this start (empty when another instance already had). */
  migrated: number[];
  close(): Promise<void>;
}

export async function openClusterAccounts(options: {
  databaseUrl: string;
  redisUrl?: string;
  redisPrefix: string;
  publicUrl: string;
  settings: AccountsSettings;
  /** The chain SIWE checks smart-account signatures on (SIWE_RPC_URL); none: they are refused. */
  siweChain?: ChainClient;
  responses: ResponseStoreSettings;
  onSweepError?: (err: unknown) => void;
  onKeptRoundsSweepError?: (err: unknown) => void;
  /** The most kept rounds every instance together keeps, in bytes (`chat.keptRoundsMaxChars`). */
  keptRoundsMaxChars: number;
  onTouchError?: (err: unknown) => void;
  /** A key change could not be broadcast (Redis down): other instances learn it by the re-check. */
  onBroadcastError?: (err: unknown) => void;
}): Promise<ClusterAccounts> {
  const undo: Array<() => void | Promise<void>> = [];
  const closeAll = async () => {
    for (const step of undo.reverse()) await step();
  };
  try {
    const db: Database = await openDatabase(options.databaseUrl);
    undo.push(() => db.close());
    const migrated = await migrate(db.sql);
    let redis: SharedRedis | undefined;
    if (options.redisUrl) {
      redis = await openSharedRedis({ url: options.redisUrl, prefix: options.redisPrefix });
      undo.push(() => (redis as SharedRedis).close());
    }
    const ledger = new PostgresLedger(db.sql, { reservationTtlMs: options.settings.reservationTtlMs, onSweepError: options.onSweepError });
    ledger.start();
    undo.push(() => ledger.stop());
    const responses = new PostgresResponseStore(db.sql, options.responses);
    undo.push(sweepEvery(responses, options.responses.sweepIntervalMs, options.onSweepError ?? (() => {})));
    const apiKeys = new ApiKeys(new PostgresKeyStore(db.sql), { onTouchError: options.onTouchError });
    const invalidation = await keepKeyCachesHonest(apiKeys, { redis, onError: options.onBroadcastError });
    undo.push(() => invalidation.stop());
    let shared: ClusterAccounts['shared'];
    if (redis) {
      const chatSlots = new ChatLeases(redis);
      undo.push(() => chatSlots.stop());
      shared = { limiters: redisLimiters(redis), chatSlots };
    }
    const siwe = new SiweVerifier({
      publicUrl: options.publicUrl,
      nonceTtlMs: options.settings.nonceTtlMs,
      chain: options.siweChain,
      nonces: redis ? new RedisNonces(redis, { ttlMs: options.settings.nonceTtlMs }) : undefined,
    });
    let keptRounds: ClusterAccounts['keptRounds'];
    const maxBytes = options.keptRoundsMaxChars;
    if (redis) keptRounds = new RedisKeptRounds(redis, { maxBytes });
    else {
      const swept = new PostgresKeptRounds(db.sql, { onSweepError: options.onKeptRoundsSweepError, maxBytes });
      swept.start();
      undo.push(() => swept.stop());
      keptRounds = swept;
    }
    let closing: Promise<void> | undefined;
    return {
      ledger,
      apiKeys,
      siwe,
      health: clusterHealth(db, redis),
      responses,
      deposits: new PostgresDepositStore(db.sql),
      paymentRecords: new PostgresX402PaymentRecords(db.sql),
      shared,
      keptRounds,
      migrated,
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
