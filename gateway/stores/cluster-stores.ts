/**
 * Cluster mode's stores, opened in order: PostgreSQL (checked, then migrated under the advisory
 * lock), Redis when configured, then the ledger's expiry timer, the key cache's invalidation,
 * nonces, chat leases, and the store of kept chat rounds (Redis when configured, else PostgreSQL
 * with its sweep). Any number of gateways open the same; nothing here takes a DATA_DIR
 * lock. A store down at start is StoreUnavailable naming it (main.ts exits 1 with the message).
 * `close()` undoes it in reverse.
 *
 * @example
 *   const stores = await openClusterStores(config, { logger, siweChain })   // config.cluster.databaseUrl is set
 */
import { limitsFrom, type KeyLimits } from '../ledger/key-budgets.js';
import { openDatabase, type Database } from '../storage/postgres/database.js';
import { migrate } from '../storage/postgres/migrate.js';
import { PostgresResponseStore } from '../storage/postgres/postgres-response-store.js';
import { PostgresX402PaymentRecords } from '../storage/postgres/postgres-x402-payment-records.js';
import { PostgresDepositStore } from '../storage/postgres/postgres-deposit-store.js';
import { PostgresWatchLease } from '../storage/postgres/postgres-watch-lease.js';
import { PostgresKeptRounds } from '../storage/postgres/postgres-kept-rounds.js';
import { openSharedRedis, type SharedRedis } from '../storage/redis/shared-redis.js';
import { RedisNonces } from '../storage/redis/redis-nonces.js';
import { redisLimiters } from '../storage/redis/redis-rate-limits.js';
import { ChatLeases } from '../storage/redis/redis-chat-leases.js';
import { keepKeyCachesHonest } from '../storage/redis/redis-key-invalidation.js';
import { RedisKeptRounds } from '../storage/redis/redis-kept-rounds.js';
import { clusterHealth } from '../storage/cluster-health.js';
import { PostgresLedger } from '../ledger/postgres-ledger.js';
import { PostgresUsageHistory } from '../storage/postgres/postgres-usage-history.js';
import { sweepUsageEvery } from '../ledger/usage.js';
import { ApiKeys } from '../keys/api-keys.js';
import { PostgresKeyStore } from '../keys/postgres-key-store.js';
import { SiweVerifier } from '../keys/siwe.js';
import { NonceStore } from '../keys/nonce-store.js';
import { sweepEvery } from '../responses/response-store.js';
import type { KeptRoundsStore } from '../chat/kept-rounds.js';
import { memoryLimiters } from '../http/middleware/rate-limit.js';
import { UndoStack } from './undo-stack.js';
import type { CliStores, ClusterConfig, StoreOpening, Stores } from './stores.js';

export async function openClusterStores(config: ClusterConfig, { logger, siweChain }: StoreOpening): Promise<Stores> {
  const { databaseUrl, redisUrl, redisPrefix } = config.cluster;
  const { accounts: settings, responses: responseSettings } = config;
  if (!redisUrl) {
    logger.warn(
      'cluster mode without REDIS_URL: rate limits, chat concurrency and SIWE nonces are per instance, ' +
        'each key cache re-checks PostgreSQL every 5 s, and kept chat rounds live in PostgreSQL',
    );
  }
  const onSweepError = (err: unknown) => logger.error({ err }, 'expiry sweep failed (reservations or stored responses)');
  const opened = new UndoStack();
  try {
    const db: Database = await openDatabase(databaseUrl);
    opened.push(() => db.close());
    const migrated = await migrate(db.sql);
    let redis: SharedRedis | undefined;
    if (redisUrl) {
      redis = await openSharedRedis({ url: redisUrl, prefix: redisPrefix });
      opened.push(() => (redis as SharedRedis).close());
    }
    const ledger = new PostgresLedger(db.sql, { reservationTtlMs: settings.reservationTtlMs, onSweepError });
    ledger.start();
    opened.push(() => ledger.stop());
    const usage = new PostgresUsageHistory(db.sql);
    opened.push(sweepUsageEvery(usage, config.usage.retentionDays, (err) => logger.error({ err }, 'usage records sweep failed')));
    const responses = new PostgresResponseStore(db.sql, responseSettings);
    opened.push(sweepEvery(responses, responseSettings.sweepIntervalMs, onSweepError));
    const apiKeys = new ApiKeys<KeyLimits>(new PostgresKeyStore(db.sql), {
      limitsOf: limitsFrom(ledger),
      onTouchError: (err) => logger.warn({ err }, 'API key last_used_at write failed'),
    });
    const invalidation = await keepKeyCachesHonest(apiKeys, {
      redis,
      onError: (err) => logger.warn({ err }, 'API key change not broadcast (other instances re-check within 30 s)'),
    });
    opened.push(() => invalidation.stop());
    let sharedChatSlots: ChatLeases | undefined;
    if (redis) {
      const leases = new ChatLeases(redis);
      opened.push(() => leases.stop());
      sharedChatSlots = leases;
    }
    const siwe = new SiweVerifier({
      publicUrl: config.server.publicUrl,
      chain: siweChain,
      nonces: redis ? new RedisNonces(redis, { ttlMs: settings.nonceTtlMs }) : new NonceStore({ ttlMs: settings.nonceTtlMs }),
    });
    let keptRounds: KeptRoundsStore;
    const maxBytes = config.chat.keptRoundsMaxChars;
    if (redis) keptRounds = new RedisKeptRounds(redis, { maxBytes });
    else {
      const swept = new PostgresKeptRounds(db.sql, {
        onSweepError: (err) => logger.error({ err }, 'kept chat rounds sweep failed'),
        maxBytes,
      });
      swept.start();
      opened.push(() => swept.stop());
      keptRounds = swept;
    }
    logger.info({ migrated, redis: redis !== undefined }, 'cluster mode: accounts on PostgreSQL');
    return {
      ledger,
      usage,
      apiKeys,
      siwe,
      responses,
      paymentRecords: new PostgresX402PaymentRecords(db.sql),
      keptRounds,
      deposits: new PostgresDepositStore(db.sql),
      watchLease: new PostgresWatchLease(databaseUrl),
      limiters: redis ? redisLimiters(redis) : memoryLimiters,
      sharedChatSlots,
      health: clusterHealth(db, redis),
      keysFile: undefined,
      close: () => opened.undo(),
    };
  } catch (err) {
    await opened.undo().catch(() => {});
    throw err;
  }
}

/**
 * The credits CLI's stores in cluster mode: the PostgreSQL ledger on one connection, migrated
 * first as a gateway would. Every ledger step is atomic there, so the CLI is one more writer
 * among the gateways; it starts no timers.
 */
export async function openClusterCliStores(config: ClusterConfig): Promise<CliStores> {
  const db = await openDatabase(config.cluster.databaseUrl, { max: 1 });
  try {
    await migrate(db.sql);
  } catch (err) {
    await db.close();
    throw err;
  }
  return {
    ledger: new PostgresLedger(db.sql, { reservationTtlMs: config.accounts.reservationTtlMs }),
    usage: new PostgresUsageHistory(db.sql),
    close: () => db.close(),
  };
}
