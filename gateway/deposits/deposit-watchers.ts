/**
 * Deposits as the gateway runs them: one watcher per chain that has a treasury in the config,
 * each reading the chain through the URLs of the shared chain list (`config/chains.json`,
 * `RPC_URL_<CHAIN>`: chains/chain-list.ts); their part of /health and /metrics; and what the
 * deposit routes show. In cluster mode every instance runs its watchers, and one scans each chain
 * at a time (`lease`, storage/postgres/postgres-watch-lease.ts): the others stand by to take over. Correctness does
 * not rest on it: the ledger's permanent record per deposit makes a second credit of a log a no-op.
 *
 * @example
 *   const deposits = createDeposits({ settings: config.deposits, env, store, ledger, metrics, logger, readerFor })
 *   deposits?.start()
 */
import { ConfigError, type DepositsConfig, type Env } from '../config.js';
import type { Ledger } from '../ledger/ledger.js';
import type { HealthContributor, HealthReport } from '../health.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { readChainList, type ChainConfig } from '../../chains/chain-list.js';
import type { ChainReader } from './chain-reader.js';
import { depositId, type DepositStore } from './deposit-store.js';
import { DepositWatcher, type WatchedChain, type WatchLease, type WatcherStatus } from './deposit-watcher.js';

export interface ChainWatch {
  chain: WatchedChain;
  status: WatcherStatus;
}

export interface Deposits {
  /** The watched chains, in config order, with their watchers' progress. */
  chains: ChainWatch[];
  start(): void;
  stop(): Promise<void>;
  health: HealthContributor;
}

export interface DepositsOptions {
  settings: DepositsConfig;
  env: Env;
  store: DepositStore;
  ledger: Pick<Ledger, 'creditExternal'>;
  metrics: Metrics;
  logger: Logger;
  /** The chain list (default: read from CHAINS_CONFIG or config/chains.json with `env`'s overrides). */
  chainList?: ChainConfig[];
  /** One reader per chain, built by the composition root (`createChainReader`; tests put a proxy in between). */
  readerFor: (chain: ChainConfig) => ChainReader;
  now?: () => number;
  /** Cluster mode: who scans each chain (released when the watchers stop). */
  lease?: WatchLease;
}

/** The chains that have a treasury, resolved against the chain list; ConfigError for an unknown chain. */
export function watchedChains(settings: DepositsConfig, chainList: ChainConfig[]): Array<{ watched: WatchedChain; config: ChainConfig }> {
  const out = [];
  for (const [key, entry] of Object.entries(settings.chains)) {
    if (!entry.treasury) continue;
    const config = chainList.find((chain) => chain.key === key);
    if (!config) {
      throw new ConfigError(
        `config: deposits.chains.${key}: no chain "${key}" in the chain list (${chainList.map((c) => c.key).join(', ')})`,
      );
    }
    const watched: WatchedChain = {
      key,
      name: config.name,
      chainId: config.id,
      treasury: entry.treasury.toLowerCase(),
      confirmations: entry.confirmations,
      startBlock: entry.startBlock,
      tokens: entry.tokens.map((token) => ({ ...token, address: token.address.toLowerCase() })),
    };
    out.push({ watched, config });
  }
  return out;
}

/** Undefined when no chain has a treasury: deposits are off. */
export function createDeposits(options: DepositsOptions): Deposits | undefined {
  const { settings, metrics, logger } = options;
  if (!Object.values(settings.chains).some((chain) => chain.treasury)) return undefined;
  const chainList = options.chainList ?? readChainList(options.env);
  const now = options.now ?? Date.now;
  const watchers = watchedChains(settings, chainList).map(
    ({ watched, config }) =>
      new DepositWatcher({
        chain: watched,
        reader: options.readerFor(config),
        store: options.store,
        ledger: options.ledger,
        pollIntervalMs: settings.pollIntervalMs,
        maxBlockRange: settings.maxBlockRange,
        now,
        lease: options.lease,
        events: {
          seen: (chain, count) => metrics.depositsSeen.inc({ chain }, count),
          credited(chain, credits) {
            metrics.depositsCredited.inc({ chain });
            metrics.depositCredits.inc({ chain }, credits);
          },
          reorged: (chain) => metrics.depositsReorged.inc({ chain }),
          refused: (chain, deposit, err) =>
            logger.error(
              { chain, deposit: depositId(deposit), code: err.code, error: err.message },
              'deposit not credited: the ledger refused it',
            ),
          progressed(chain, status) {
            metrics.depositWatcherBlocksBehind.set({ chain }, blocksBehind(status) ?? 0);
            metrics.depositWatcherLastProgress.set({ chain }, Math.floor(status.lastProgressAt / 1000));
          },
          // viem's short message names the failure without the request URL (which may hold a provider key).
          failed: (chain, err, retryInMs) =>
            logger.warn(
              { chain, retryInMs, error: (err as { shortMessage?: string }).shortMessage ?? String(err) },
              'deposit watcher pass failed; retrying',
            ),
        },
      }),
  );
  return {
    chains: watchers.map((watcher) => ({ chain: watcher.chain, status: watcher.status })),
    start() {
      for (const watcher of watchers) watcher.start();
      logger.info({ chains: watchers.map((w) => w.chain.key) }, 'deposit watchers started');
    },
    async stop() {
      await Promise.all(watchers.map((watcher) => watcher.stop()));
      await options.lease?.release();
    },
    health: {
      health: () => watcherHealth(watchers, settings.stallAfterMs, now()),
    },
  };
}

/**
 * How far this instance's scan is behind the head; undefined before both are known, and on a
 * standby, which scans nothing (its head moves, its scannedTo does not): the holder reports the lag.
 */
function blocksBehind(status: WatcherStatus): number | undefined {
  if (status.standby || status.head === undefined || status.scannedTo === undefined) return undefined;
  return Math.max(0, status.head - status.scannedTo);
}

/**
 * `deposits: [{chain, head, scanned_to, blocks_behind, seconds_since_progress, status}]`; degraded
 * when one stalled. `standby`: another instance scans the chain (its /health has the figures).
 */
function watcherHealth(watchers: DepositWatcher[], stallAfterMs: number, now: number): HealthReport {
  let degraded = false;
  const deposits = watchers.map(({ chain, status }) => {
    const stalled = now - status.lastProgressAt > stallAfterMs;
    degraded ||= stalled;
    return {
      chain: chain.key,
      chain_id: chain.chainId,
      head: status.head ?? null,
      scanned_to: status.scannedTo ?? null,
      blocks_behind: blocksBehind(status) ?? null,
      seconds_since_progress: Math.floor((now - status.lastProgressAt) / 1000),
      status: stalled ? 'stalled' : status.standby ? 'standby' : status.scannedTo === undefined ? 'starting' : 'ok',
    };
  });
  return { fields: { deposits }, degraded };
}
