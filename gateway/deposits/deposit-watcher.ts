/**
 * One chain's deposit watcher. Each pass:
 *
 * 1. reads the head and the settled height: head − N + 1 for a count of N confirmations (a log in
 *    block b has head − b + 1), or the block the node tags `finalized` / `safe`;
 * 2. scans ERC-20 Transfer logs of the accepted tokens to the treasury from the saved cursor to the
 *    head, in pages of at most `maxBlockRange` blocks (halved when a provider refuses a range,
 *    doubled again after a run of pages that fit: chains/page-range.ts), and
 *    records each as pending (a known one seen in another block moves there);
 * 3. moves the cursor only through settled blocks, so the unsettled ones are scanned again on
 *    every pass: a log a reorg re-mined elsewhere in them is found where it landed;
 * 4. credits each pending deposit at or below the settled height whose block hash at that height is
 *    still the one the log named, through `Ledger.creditExternal` keyed by (chain id, tx hash, log
 *    index): the ledger's permanent record makes a crash, a second instance or a cursor reset to
 *    `startBlock` harmless. A hash that changed marks the deposit reorged; it is never credited
 *    unless the log is seen again.
 *
 * In cluster mode a pass begins by asking for the chain's lease (`WatchLease`): one instance scans
 * a chain at a time, the others stand by.
 *
 * A failed pass is retried with exponential backoff (the transport already moved on to the chain's
 * next URL); `status` says how far it got, page by page, for /health and /metrics.
 *
 * @example
 *   const watcher = new DepositWatcher({ chain, reader, store, ledger, pollIntervalMs: 5_000, maxBlockRange: 1_000 })
 *   watcher.start()
 *   await watcher.stop()
 */
import { GatewayError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ChainReader } from './chain-reader.js';
import { PageRange } from '../../chains/page-range.js';
import { depositId, type DepositRecord, type DepositStore } from './deposit-store.js';

export interface AcceptedToken {
  symbol: string;
  /** Lower case. */
  address: string;
  decimals: number;
  unitsPerCredit: bigint;
}

export interface WatchedChain {
  /** The key in config/chains.json, e.g. `base`. */
  key: string;
  name: string;
  chainId: number;
  /** Lower case. */
  treasury: string;
  confirmations: 'finalized' | 'safe' | number;
  startBlock?: number;
  tokens: AcceptedToken[];
}

/** What a pass counts, for metrics. */
export interface WatcherEvents {
  seen(chain: string, count: number): void;
  credited(chain: string, credits: number): void;
  reorged(chain: string): void;
  /** The ledger refused one deposit for good (a conflicting record, a total past 2^53 − 1): it stays pending. */
  refused(chain: string, deposit: DepositRecord, err: GatewayError): void;
  /** After each page scanned and each completed pass. */
  progressed(chain: string, status: WatcherStatus): void;
  failed(chain: string, err: unknown, retryInMs: number): void;
}

export interface WatcherStatus {
  /** The latest head read; undefined before the first read. */
  head?: number;
  /** Every block up to here has been scanned (in this pass, or the last). */
  scannedTo?: number;
  /** Deposits up to here have their confirmations. */
  settledTo?: number;
  /** Unix ms of the last progress: a page scanned or a pass completed (the watcher's start before any). */
  lastProgressAt: number;
  /** Another instance holds the chain's lease and scans it; this one stands by (cluster mode). */
  standby?: boolean;
}

/**
 * Which instance scans a chain when several share the store (cluster mode); without one, this
 * watcher always does. See storage/postgres/postgres-watch-lease.ts.
 */
export interface WatchLease {
  /** Whether this instance holds (or just took) the chain's lease. Throws when the store fails. */
  holds(chainId: number): Promise<boolean>;
  release(): Promise<void>;
}

export interface DepositWatcherOptions {
  chain: WatchedChain;
  reader: ChainReader;
  store: DepositStore;
  ledger: Pick<Ledger, 'creditExternal'>;
  pollIntervalMs: number;
  maxBlockRange: number;
  events?: Partial<WatcherEvents>;
  now?: () => number;
  /** Cluster mode: scan only while this instance holds the chain's lease. */
  lease?: WatchLease;
}

/** Backoff after failed passes stops growing here. */
const MAX_BACKOFF_MS = 5 * 60_000;

export class DepositWatcher {
  readonly status: WatcherStatus;
  private readonly now: () => number;
  private readonly tokens: Map<string, AcceptedToken>;
  private readonly range: PageRange;
  private failures = 0;
  private chainChecked = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: DepositWatcherOptions) {
    this.now = options.now ?? Date.now;
    this.range = new PageRange(options.maxBlockRange);
    this.tokens = new Map(options.chain.tokens.map((token) => [token.address, token]));
    this.status = { lastProgressAt: this.now() };
  }

  get chain(): WatchedChain {
    return this.options.chain;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stop polling and wait for a running pass (its credits are committed before it ends). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One whole pass: scan to the head, then credit what has its confirmations. */
  async pass(): Promise<void> {
    const { chain, reader, store, lease } = this.options;
    if (lease) {
      // Standing by is this instance's progress: the holder's own /health tells how the scan goes.
      this.status.standby = !(await lease.holds(chain.chainId));
      if (this.status.standby) {
        // The head alone (one eth_blockNumber): the confirmations this instance's deposit listings
        // show count from it. A failed read keeps the last one; the holder's scan is not at stake.
        this.status.head = await reader.head().catch(() => this.status.head);
        return this.progressed();
      }
    }
    if (!this.chainChecked) {
      const served = await reader.chainId();
      if (served !== chain.chainId) throw new Error(`the RPC serves chain ${served}, but ${chain.key} is chain ${chain.chainId}`);
      this.chainChecked = true;
    }
    const head = await reader.head();
    this.status.head = head;
    const rule = chain.confirmations;
    const settled = typeof rule === 'number' ? head - rule + 1 : await reader.taggedHeight(rule);
    let from = await store.cursor(chain.chainId);
    if (from === undefined) {
      from = chain.startBlock ?? head;
      await store.saveCursor(chain.chainId, from);
    }
    await this.scan(from, head, settled);
    this.status.settledTo = settled;
    await this.credit(settled);
    this.progressed();
  }

  private async scan(from: number, head: number, settled: number): Promise<void> {
    const { chain, reader, store } = this.options;
    const tokens = [...this.tokens.keys()];
    for (let start = from; start <= head;) {
      const { end, result: logs } = await this.range.page(start, head, (fromBlock, toBlock) =>
        reader.transfersTo({ treasury: chain.treasury, tokens, fromBlock, toBlock }),
      );
      const added = await store.recordSeen(logs, this.now());
      if (added > 0) this.options.events?.seen?.(chain.key, added);
      const settledEnd = Math.min(end, settled);
      if (settledEnd >= start) await store.saveCursor(chain.chainId, settledEnd + 1);
      this.status.scannedTo = Math.max(this.status.scannedTo ?? end, end);
      // A long catch-up is progress too (the lag shrinks page by page); the last page counts only
      // with the pass that credits it, so a pass that keeps failing to credit reads as stalled.
      if (end < head) this.progressed();
      start = end + 1;
    }
  }

  private async credit(settled: number): Promise<void> {
    const { chain, reader, store, ledger } = this.options;
    const hashes = new Map<number, string | undefined>();
    for (const deposit of await store.pending(chain.chainId)) {
      if (deposit.blockNumber > settled) continue;
      if (!hashes.has(deposit.blockNumber)) hashes.set(deposit.blockNumber, await reader.blockHash(deposit.blockNumber));
      const hash = hashes.get(deposit.blockNumber);
      // No block there: the node that answered is behind the one that gave the head (a provider's
      // backends, the next fallback URL). Not a reorg: the deposit waits for the next pass.
      if (hash === undefined) continue;
      if (hash !== deposit.blockHash) {
        await store.markReorged(deposit, deposit.blockHash);
        this.options.events?.reorged?.(chain.key);
        continue;
      }
      // Scanned only for accepted tokens; one dropped from the config since stays pending.
      const token = this.tokens.get(deposit.token);
      if (!token) continue;
      let result;
      try {
        result = await ledger.creditExternal(this.creditOf(deposit, token));
      } catch (err) {
        // A refusal about this deposit must not hold up the others; a store that is down fails the pass.
        if (!(err instanceof GatewayError) || err.status >= 500) throw err;
        this.options.events?.refused?.(chain.key, deposit, err);
        continue;
      }
      await store.markCredited(deposit, result.credits, this.now());
      if (result.status === 'credited') this.options.events?.credited?.(chain.key, result.credits);
    }
  }

  private progressed(): void {
    this.status.lastProgressAt = this.now();
    this.options.events?.progressed?.(this.options.chain.key, this.status);
  }

  private creditOf(deposit: DepositRecord, token: AcceptedToken) {
    return {
      wallet: deposit.wallet,
      source: 'deposit' as const,
      externalId: depositId(deposit),
      units: deposit.amount,
      unitsPerCredit: token.unitsPerCredit,
      remainderKey: `${deposit.chainId}:${token.address}`,
    };
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().then(
        () => {
          this.failures = 0;
          this.schedule(this.options.pollIntervalMs);
        },
        (err: unknown) => {
          this.failures++;
          const retryIn = Math.min(MAX_BACKOFF_MS, this.options.pollIntervalMs * 2 ** Math.min(this.failures, 16));
          this.options.events?.failed?.(this.options.chain.key, err, retryIn);
          this.schedule(retryIn);
        },
      );
    }, delayMs);
    this.timer.unref();
  }
}
