/**
 * The embedded credit ledger: the authority is in memory, in the one process that owns DATA_DIR
 * (its lock), and what must survive a crash is group-committed to SQLite.
 *
 * - A wallet's record is read from SQLite once, then every step is plain arithmetic on memory:
 *   no lock, no read per request.
 * - Holds live in memory only. The stored `credits` counts held credits as the wallet's, so a
 *   crash gives every hold back, as the reservation TTL would. Reserve, extend, release and
 *   expiry therefore write nothing.
 * - Settle, charge and grant write: the wallet is marked dirty and the step answers once a
 *   commit holding it has landed (see group-commit.ts: one transaction for everything that queued
 *   while the previous one ran). A charge is durable before the response that incurred it is
 *   sent; a grant is acknowledged only once committed.
 * - A failed commit fails every step waiting on it (503 store_unavailable) and drops the memory of
 *   the wallets it held, so their next step reads what SQLite has: nothing is charged twice, and
 *   nothing is reported that was not stored.
 *
 * - An outside payment (creditExternal) is committed in the same transaction as its permanent
 *   record and the wallet's new remainder; payments sharing a remainder run one at a time, each
 *   reading the remainder its predecessor committed.
 * - Every usage record (usage.ts) is queued beside the wallet change it records and lands in the
 *   same commit: a failed commit loses both, a crash keeps both or neither.
 *
 * - An API key's limits and spend counters (key-budgets.ts) live in `ledger_key_limits`, read once
 *   per key like a wallet and written in the same commit as the wallet a settle or charge changed;
 *   a key's held credits live in memory with its holds.
 *
 * Invariant: total_deposited = credits + held + total_spent.
 *
 * @example
 *   const ledger = await openEmbeddedLedger(db, { reservationTtlMs: 360_000 })
 *   const hold = await ledger.reserve(wallet, 5)     // or InsufficientCredits (402)
 *   const { charged } = await ledger.settle(hold, 3)  // charges 3, returns 2, durable
 */
import { idSequence } from '../id-sequence.js';
import { nonNegativeInteger, positiveInteger } from './ledger-amounts.js';
import { z } from 'zod';
import {
  ApiKeyExpired,
  ExternalCreditConflict,
  GatewayError,
  IdempotencyConflict,
  InsufficientCredits,
  KeyBudgetExhausted,
  LedgerTotalTooLarge,
  ReservationClosed,
} from '../errors.js';
import { GroupCommit } from './group-commit.js';
import { KeyedMutex } from '../keyed-mutex.js';
import { creditsFor, sameExternalCredit, validateExternalCredit } from './external-credit.js';
import type { SqliteConnection } from '../storage/sqlite/sqlite-connection.js';
import type {
  Balance,
  ChargeOptions,
  ExternalCredit,
  ExternalCreditResult,
  KeyLimitsChange,
  Ledger,
  Reservation,
  Settlement,
} from './ledger.js';
import { LRUCache } from 'lru-cache';
import {
  addSpend,
  isExpired,
  keyRemaining,
  settleable,
  spentToday,
  utcDay,
  type KeyLimits,
  type KeySpend,
  type KeyUsage,
} from './key-budgets.js';
import { creditRow, spendRow, type SpendUsage, type UsageRow } from './usage.js';
import { migrateKeyvLedger } from '../storage/legacy/keyv-ledger-migration.js';

/** Settle/release outcomes kept per wallet so a repeat answers the same. */
const MAX_CLOSED = 256;
/** Idempotent grants are remembered this long (the admin API's retry window, with room to spare). */
const IDEMPOTENCY_TTL_MS = 30 * 24 * 3_600_000;
/** Wallets kept in memory; past it, the least recently used ones with nothing pending are dropped. */
const DEFAULT_MAX_WALLETS = 100_000;
/** Rows per INSERT statement (SQLite allows 32,766 parameters). */
const ROWS_PER_STATEMENT = 500;

const count = z.number().int().nonnegative();
const storedWalletSchema = z.object({ credits: count, total_deposited: count, total_spent: count });
/** A key's limits as ledger_key_limits keeps them (JSON; also read by the migrate-to-postgres CLI). */
export const storedLimitsSchema = z.object({
  maxCredits: count.nullable(),
  maxCreditsPerDay: count.nullable(),
  expiresAt: z.number().int().nullable(),
  tools: z.array(z.string()).nullable(),
  models: z.array(z.string()).nullable(),
}) satisfies z.ZodType<KeyLimits>;
/** Keys known to have no limits row, remembered so their steps read SQLite once. */
const MAX_UNLIMITED_KEYS = 100_000;
const storedGrantSchema = z.object({ wallet: z.string(), amount: count, result: storedWalletSchema.extend({ address: z.string() }) });

const LEDGER_SCHEMA = `
  CREATE TABLE IF NOT EXISTS ledger_wallets (address TEXT PRIMARY KEY, record TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS ledger_grants (
    key TEXT PRIMARY KEY, wallet TEXT NOT NULL, amount INTEGER NOT NULL, result TEXT NOT NULL, at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS ledger_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
  -- Outside payments, kept forever: the key that makes each one count once. Units are decimal text (bigint).
  CREATE TABLE IF NOT EXISTS ledger_external_credits (
    source TEXT NOT NULL, external_id TEXT NOT NULL, wallet TEXT NOT NULL, units TEXT NOT NULL,
    units_per_credit TEXT NOT NULL, remainder_key TEXT NOT NULL, credits INTEGER NOT NULL, remainder TEXT NOT NULL,
    at INTEGER NOT NULL, PRIMARY KEY (source, external_id)
  );
  CREATE TABLE IF NOT EXISTS ledger_remainders (
    wallet TEXT NOT NULL, remainder_key TEXT NOT NULL, units TEXT NOT NULL, PRIMARY KEY (wallet, remainder_key)
  );
  -- API keys' limits (JSON, key-budgets.ts) and spend: lifetime, and the UTC day (days since the epoch) day_spent counts.
  CREATE TABLE IF NOT EXISTS ledger_key_limits (
    key_id TEXT PRIMARY KEY, wallet TEXT NOT NULL, limits TEXT NOT NULL,
    spent INTEGER NOT NULL, day INTEGER NOT NULL, day_spent INTEGER NOT NULL
  );
  -- Usage records (usage.ts), written in the commit of the step each records; seq orders a wallet's records of one ms.
  CREATE TABLE IF NOT EXISTS usage_records (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL, wallet TEXT NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL,
    request_id TEXT, key_id TEXT, model TEXT, tools TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, credits INTEGER NOT NULL, source_id TEXT
  );
  CREATE INDEX IF NOT EXISTS usage_records_by_wallet ON usage_records (wallet, at, seq);
  CREATE INDEX IF NOT EXISTS usage_records_by_age ON usage_records (at);
`;

export interface EmbeddedLedgerOptions {
  reservationTtlMs: number;
  /** How often open reservations are swept; default a quarter of the TTL (50 ms … 30 s). */
  sweepIntervalMs?: number;
  maxWallets?: number;
  now?: () => number;
}

interface Hold {
  amount: number;
  expiresAt: number;
  /** The key whose budgets hold it too. */
  key?: KeyState;
}

interface KeyState {
  id: string;
  wallet: string;
  limits: KeyLimits;
  spend: KeySpend;
  /** Credits its open holds hold (memory only, as holds are). */
  held: number;
  dropped: boolean;
}

/** A row of ledger_key_limits (also read by the migrate-to-postgres CLI). */
export interface KeyLimitsRow {
  key_id: string;
  wallet: string;
  limits: string;
  spent: number;
  day: number;
  day_spent: number;
}

interface WalletState {
  address: string;
  /** Spendable: not held, not spent. */
  credits: number;
  totalDeposited: number;
  totalSpent: number;
  holds: Map<string, Hold>;
  /** Outcomes of settled/released holds (charged credits), oldest first. */
  closed: Map<string, number>;
  /** Set when a failed commit dropped this copy: steps that were waiting on it must fail too. */
  dropped: boolean;
}

/** A row of ledger_external_credits (also read by the migrate-to-postgres CLI). */
export interface ExternalRow {
  source: string;
  external_id: string;
  wallet: string;
  units: string;
  units_per_credit: string;
  remainder_key: string;
  credits: number;
  remainder: string;
  at: number;
}

interface GrantRecord {
  wallet: string;
  amount: number;
  result: Balance;
}

/** 503 store_unavailable: a commit failed; the step is not applied. */
export class LedgerCommitFailed extends GatewayError {
  constructor(cause: unknown) {
    super({
      status: 503,
      code: 'store_unavailable',
      // As StoreUnavailable answers the same code in cluster mode: a server error, retry in a second.
      type: 'server_error',
      headers: { 'Retry-After': '1' },
      message: 'The credit store could not save this change; nothing was charged. Try again.',
      details: cause instanceof Error ? cause.message : String(cause),
      cause,
    });
  }
}

export class EmbeddedLedger implements Ledger {
  private readonly wallets = new Map<string, WalletState>();
  private readonly loading = new Map<string, Promise<WalletState>>();
  /** Wallets changed since the last commit started. */
  private dirty = new Set<WalletState>();
  /** Idempotent grants made since the last commit started. */
  private dirtyGrants = new Map<string, GrantRecord & { at: number }>();
  /** Outside payments and remainders changed since the last commit started. */
  private dirtyExternals: ExternalRow[] = [];
  private dirtyRemainders = new Map<string, { wallet: string; key: string; units: bigint }>();
  /** Keys whose limits or spend changed since the last commit started. */
  private dirtyKeys = new Set<KeyState>();
  /** Keys with a limits row, read on first use; and keys known to have none. */
  private readonly keys = new Map<string, KeyState>();
  private readonly unlimitedKeys = new LRUCache<string, true>({ max: MAX_UNLIMITED_KEYS });
  private readonly loadingKeys = new Map<string, Promise<KeyState | undefined>>();
  /** Usage records of the steps since the last commit started: each lands in its step's commit. */
  private dirtyUsage: UsageRow[] = [];
  /** Outside payments on their way, by source and id: a repeat waits for the first. */
  private readonly crediting = new Map<string, Promise<ExternalCreditResult>>();
  /** One outside payment at a time per (wallet, remainder key): each reads the remainder the last committed. */
  private readonly remainderLocks = new KeyedMutex();
  /** Idempotency keys seen (committed or on their way), and grants still running per key. */
  private readonly grants = new Map<string, GrantRecord>();
  private readonly granting = new Map<string, Promise<Balance>>();
  /** Wallets that may hold open reservations: the only ones the timer visits. */
  private readonly holding = new Set<WalletState>();
  private readonly commits: GroupCommit;
  private readonly now: () => number;
  private readonly maxWallets: number;
  private readonly nextHoldId = idSequence('res_');
  private readonly nextUsageId = idSequence('use_');
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: SqliteConnection,
    private readonly options: EmbeddedLedgerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.maxWallets = options.maxWallets ?? DEFAULT_MAX_WALLETS;
    this.commits = new GroupCommit(() => this.flush());
  }

  /** Create the tables, bring over a store written by the Keyv ledger, forget stale grants, start the expiry timer. */
  async start(): Promise<void> {
    await this.db.exec(LEDGER_SCHEMA);
    await migrateKeyvLedger(this.db);
    await this.db.run('DELETE FROM ledger_grants WHERE at < ?', [this.now() - IDEMPOTENCY_TTL_MS]);
    const ttl = this.options.reservationTtlMs;
    const interval = this.options.sweepIntervalMs ?? Math.min(30_000, Math.max(50, Math.floor(ttl / 4)));
    this.timer = setInterval(() => this.sweepAll(), interval);
    this.timer.unref();
  }

  /** Stop the timer and wait for every commit asked for. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.commits.drain();
  }

  /**
   * Whether the ledger's file takes a commit: one row of `ledger_meta` rewritten (/health, at most
   * once a second). A read would pass on a full disk or a file that refuses writes, where every
   * charge fails. Its own statement: the connection is synchronous, so it never splits a batch.
   */
  async probe(): Promise<void> {
    await this.db.run(
      "INSERT INTO ledger_meta (name, value) VALUES ('health_probe', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      [String(this.now())],
    );
  }

  /** Give back every expired hold of every wallet that holds any (memory only). */
  sweepAll(): void {
    for (const state of this.holding) this.sweep(state);
  }

  async balance(wallet: string): Promise<Balance> {
    const state = await this.state(wallet);
    this.sweep(state);
    return toBalance(state);
  }

  async grant(wallet: string, amount: number, idempotencyKey?: string): Promise<Balance> {
    positiveInteger(amount, 'amount');
    const address = wallet.toLowerCase();
    if (idempotencyKey === undefined) {
      const state = await this.state(address);
      const balance = addCredits(state, amount);
      this.recordCredit(address, amount, 'grant', null);
      await this.durable(state);
      return balance;
    }
    // One grant per key at a time: a repeat waits for the first and answers what it answered.
    const running = this.granting.get(idempotencyKey);
    if (running) return running.then(() => this.grant(address, amount, idempotencyKey));
    const step = this.idempotentGrant(address, amount, idempotencyKey).finally(() => this.granting.delete(idempotencyKey));
    this.granting.set(idempotencyKey, step);
    return step;
  }

  async reserve(wallet: string, amount: number, key?: string): Promise<Reservation> {
    positiveInteger(amount, 'amount');
    // The key first: nothing may await between reading the wallet's state and changing it.
    const keyState = key === undefined ? undefined : await this.keyState(key);
    const state = await this.state(wallet);
    // From here to the return nothing awaits: wallet and key change in one step.
    this.sweep(state);
    if (keyState) this.checkKey(keyState, amount);
    if (state.credits < amount) throw new InsufficientCredits(state.credits, amount);
    const id = this.nextHoldId();
    state.credits -= amount;
    state.holds.set(id, { amount, expiresAt: this.now() + this.options.reservationTtlMs, key: keyState });
    if (keyState) keyState.held += amount;
    this.holding.add(state);
    return key === undefined ? { id, wallet: state.address, amount } : { id, wallet: state.address, amount, key };
  }

  async extend(reservation: Reservation, amount: number): Promise<Reservation> {
    positiveInteger(amount, 'amount');
    const state = await this.state(reservation.wallet);
    this.sweep(state);
    const hold = state.holds.get(reservation.id);
    if (!hold) throw new ReservationClosed(reservation.id);
    if (hold.key && keyRemaining(hold.key.limits, hold.key.spend, hold.key.held, this.now()) < amount) {
      throw new KeyBudgetExhausted(keyRemaining(hold.key.limits, hold.key.spend, hold.key.held, this.now()), amount);
    }
    if (state.credits < amount) throw new InsufficientCredits(state.credits, amount);
    state.credits -= amount;
    hold.amount += amount;
    if (hold.key) hold.key.held += amount;
    // Work that asks for more is alive: its hold lives another full TTL.
    hold.expiresAt = this.now() + this.options.reservationTtlMs;
    return { ...reservation, amount: hold.amount };
  }

  async settle(reservation: Reservation, cost: number, usage?: SpendUsage): Promise<Settlement> {
    nonNegativeInteger(cost, 'cost');
    const state = await this.state(reservation.wallet);
    this.sweep(state);
    const closed = state.closed.get(reservation.id);
    if (closed !== undefined) return { charged: closed, remaining: state.credits };
    const hold = state.holds.get(reservation.id);
    // Unknown: expired and forgotten, or given back by a restart. Its credits already went back.
    if (!hold) return { charged: 0, remaining: state.credits };
    const key = hold.key;
    const now = this.now();
    const charged = key ? settleable(key.limits, key.spend, cost, hold.amount, now) : Math.min(cost, hold.amount);
    state.credits += hold.amount - charged;
    state.totalSpent += charged;
    this.close(state, reservation.id, charged);
    if (key) key.held -= hold.amount;
    if (key && charged > 0) {
      key.spend = addSpend(key.spend, charged, now);
      this.dirtyKeys.add(key);
    }
    const remaining = state.credits;
    const keyLeft = key ? keyRemaining(key.limits, key.spend, key.held, now) : reservation.key === undefined ? undefined : Infinity;
    if (charged > 0) {
      if (usage) this.recordSpend(state.address, charged, usage, reservation.key);
      await this.durable(state, key);
    }
    return keyLeft === undefined ? { charged, remaining } : { charged, remaining, keyRemaining: keyLeft };
  }

  async charge(wallet: string, amount: number, options: ChargeOptions = {}): Promise<Settlement> {
    const { key, usage } = options;
    nonNegativeInteger(amount, 'amount');
    // The key first: nothing may await between reading the wallet's state and changing it.
    const keyState = key === undefined ? undefined : await this.keyState(key);
    const state = await this.state(wallet);
    this.sweep(state);
    if (keyState) this.checkKey(keyState, amount);
    if (state.credits < amount) throw new InsufficientCredits(state.credits, amount);
    const now = this.now();
    state.credits -= amount;
    state.totalSpent += amount;
    if (keyState && amount > 0) {
      keyState.spend = addSpend(keyState.spend, amount, now);
      this.dirtyKeys.add(keyState);
    }
    const remaining = state.credits;
    const keyLeft = keyState ? keyRemaining(keyState.limits, keyState.spend, keyState.held, now) : key === undefined ? undefined : Infinity;
    if (amount > 0) {
      if (usage) this.recordSpend(state.address, amount, usage, key);
      await this.durable(state, keyState);
    }
    return keyLeft === undefined ? { charged: amount, remaining } : { charged: amount, remaining, keyRemaining: keyLeft };
  }

  async setKeyLimits(change: KeyLimitsChange): Promise<void> {
    const known = await this.keyState(change.keyId);
    const state: KeyState = known ?? {
      id: change.keyId,
      wallet: change.wallet.toLowerCase(),
      limits: change.limits,
      spend: { spent: 0, day: utcDay(this.now()), daySpent: 0 },
      held: 0,
      dropped: false,
    };
    state.limits = change.limits;
    this.keys.set(state.id, state);
    this.unlimitedKeys.delete(state.id);
    this.dirtyKeys.add(state);
    try {
      await this.commits.request();
    } catch (err) {
      throw new LedgerCommitFailed(err);
    }
    if (state.dropped) throw new LedgerCommitFailed(new Error('an earlier commit of this key failed'));
  }

  async keyUsage(keyIds: string[]): Promise<Map<string, KeyUsage>> {
    const now = this.now();
    const out = new Map<string, KeyUsage>();
    for (const id of keyIds) {
      const state = await this.keyState(id);
      if (!state) continue;
      out.set(id, {
        keyId: id,
        wallet: state.wallet,
        limits: state.limits,
        spent: state.spend.spent,
        spentToday: spentToday(state.spend, now),
      });
    }
    return out;
  }

  /** Refuse a new hold or charge of `amount` on the key (expired, or over a budget). */
  private checkKey(key: KeyState, amount: number): void {
    const now = this.now();
    if (isExpired(key.limits, now)) throw new ApiKeyExpired();
    const remaining = keyRemaining(key.limits, key.spend, key.held, now);
    if (remaining < amount) throw new KeyBudgetExhausted(remaining, amount);
  }

  /** The key's limits state, read from SQLite on first use; undefined when it has no limits row. */
  private keyState(keyId: string): Promise<KeyState | undefined> | KeyState | undefined {
    const known = this.keys.get(keyId);
    if (known || this.unlimitedKeys.get(keyId)) return known;
    let loading = this.loadingKeys.get(keyId);
    if (!loading) {
      loading = this.loadKey(keyId).finally(() => this.loadingKeys.delete(keyId));
      this.loadingKeys.set(keyId, loading);
    }
    return loading;
  }

  private async loadKey(keyId: string): Promise<KeyState | undefined> {
    const [row] = await this.db.all<KeyLimitsRow>('SELECT * FROM ledger_key_limits WHERE key_id = ?', [keyId]);
    // A setKeyLimits may have run while this read was out: its state is newer.
    const known = this.keys.get(keyId);
    if (known) return known;
    if (!row) {
      this.unlimitedKeys.set(keyId, true);
      return undefined;
    }
    const parsed = storedLimitsSchema.safeParse(JSON.parse(row.limits));
    if (!parsed.success) throw new Error(`ledger: the limits of key ${keyId} are damaged: ${parsed.error.message}`);
    const state: KeyState = {
      id: keyId,
      wallet: row.wallet,
      limits: parsed.data,
      spend: { spent: row.spent, day: row.day, daySpent: row.day_spent },
      held: 0,
      dropped: false,
    };
    this.keys.set(keyId, state);
    return state;
  }

  async release(reservation: Reservation): Promise<void> {
    const state = await this.state(reservation.wallet);
    const hold = state.holds.get(reservation.id);
    if (!hold) return;
    state.credits += hold.amount;
    if (hold.key) hold.key.held -= hold.amount;
    this.close(state, reservation.id, 0);
  }

  async creditExternal(credit: ExternalCredit): Promise<ExternalCreditResult> {
    validateExternalCredit(credit);
    const key = `${credit.source}\n${credit.externalId}`;
    const running = this.crediting.get(key);
    if (running) {
      const retry = () => this.creditExternal(credit);
      return running.then(retry, retry);
    }
    const address = credit.wallet.toLowerCase();
    const step = this.remainderLocks
      .run(`${address}\n${credit.remainderKey}`, () => this.applyExternal({ ...credit, wallet: address }))
      .finally(() => this.crediting.delete(key));
    this.crediting.set(key, step);
    return step;
  }

  /** Under the remainder's lock: SQLite holds every earlier payment of this key and remainder. */
  private async applyExternal(credit: ExternalCredit): Promise<ExternalCreditResult> {
    const [prior] = await this.db.all<ExternalRow>('SELECT * FROM ledger_external_credits WHERE source = ? AND external_id = ?', [
      credit.source,
      credit.externalId,
    ]);
    if (prior) {
      const stored = {
        ...prior,
        units: BigInt(prior.units),
        unitsPerCredit: BigInt(prior.units_per_credit),
        remainderKey: prior.remainder_key,
      };
      if (!sameExternalCredit(stored, credit)) throw new ExternalCreditConflict(credit.source, credit.externalId);
      return { status: 'repeat', credits: prior.credits, remainder: BigInt(prior.remainder), balance: await this.balance(credit.wallet) };
    }
    const [kept] = await this.db.all<{ units: string }>('SELECT units FROM ledger_remainders WHERE wallet = ? AND remainder_key = ?', [
      credit.wallet,
      credit.remainderKey,
    ]);
    const { credits, remainder } = creditsFor(BigInt(kept?.units ?? '0'), credit);
    const state = await this.state(credit.wallet);
    const balance = credits > 0 ? addCredits(state, credits) : toBalance(state);
    this.dirtyExternals.push({
      source: credit.source,
      external_id: credit.externalId,
      wallet: credit.wallet,
      units: credit.units.toString(),
      units_per_credit: credit.unitsPerCredit.toString(),
      remainder_key: credit.remainderKey,
      credits,
      remainder: remainder.toString(),
      at: this.now(),
    });
    this.dirtyRemainders.set(`${credit.wallet}\n${credit.remainderKey}`, {
      wallet: credit.wallet,
      key: credit.remainderKey,
      units: remainder,
    });
    this.recordCredit(credit.wallet, credits, credit.source, credit.externalId);
    await this.durable(state);
    return { status: 'credited', credits, remainder, balance };
  }

  private async idempotentGrant(address: string, amount: number, key: string): Promise<Balance> {
    const prior = this.grants.get(key) ?? (await this.storedGrant(key));
    if (prior) {
      if (prior.wallet !== address || prior.amount !== amount) throw new IdempotencyConflict();
      return { ...prior.result };
    }
    const state = await this.state(address);
    const result = addCredits(state, amount);
    const record = { wallet: address, amount, result };
    this.grants.set(key, record);
    this.dirtyGrants.set(key, { ...record, at: this.now() });
    this.recordCredit(address, amount, 'grant', key);
    try {
      await this.durable(state);
    } catch (err) {
      this.grants.delete(key);
      throw err;
    }
    return { ...result };
  }

  private async storedGrant(key: string): Promise<GrantRecord | undefined> {
    const rows = await this.db.all<{ wallet: string; amount: number; result: string }>(
      'SELECT wallet, amount, result FROM ledger_grants WHERE key = ?',
      [key],
    );
    if (rows.length === 0) return undefined;
    const parsed = storedGrantSchema.parse({ ...rows[0], result: JSON.parse(rows[0].result) });
    this.grants.set(key, parsed);
    return parsed;
  }

  private recordSpend(wallet: string, credits: number, usage: SpendUsage, keyId: string | undefined): void {
    this.dirtyUsage.push(spendRow(this.nextUsageId(), wallet, this.now(), credits, usage, keyId));
  }

  private recordCredit(wallet: string, credits: number, kind: 'grant' | ExternalCredit['source'], sourceId: string | null): void {
    this.dirtyUsage.push(creditRow(this.nextUsageId(), wallet, this.now(), credits, kind, sourceId));
  }

  /** Answers once a commit holding `state`'s (and `key`'s) current values has landed. */
  private async durable(state: WalletState, key?: KeyState): Promise<void> {
    this.dirty.add(state);
    try {
      await this.commits.request();
    } catch (err) {
      throw new LedgerCommitFailed(err);
    }
    // An earlier commit failed after this step and dropped the copy it changed: not stored.
    if (state.dropped || key?.dropped) throw new LedgerCommitFailed(new Error('an earlier commit of this wallet failed'));
  }

  /** One transaction: every wallet and grant changed since the last commit started. */
  private async flush(): Promise<void> {
    const wallets = [...this.dirty];
    const grants = [...this.dirtyGrants];
    const externals = this.dirtyExternals;
    const remainders = [...this.dirtyRemainders.values()];
    const keys = [...this.dirtyKeys];
    this.dirtyKeys = new Set();
    const usage = this.dirtyUsage;
    this.dirtyUsage = [];
    this.dirty = new Set();
    this.dirtyGrants = new Map();
    this.dirtyExternals = [];
    this.dirtyRemainders = new Map();
    if (wallets.length === 0 && grants.length === 0 && keys.length === 0) return;
    try {
      const statements = [
        ...chunks(wallets).map((rows) => ({
          sql: `INSERT INTO ledger_wallets (address, record) VALUES ${rows.map(() => '(?, ?)').join(', ')}
             ON CONFLICT (address) DO UPDATE SET record = excluded.record`,
          params: rows.flatMap((state) => [state.address, storedRecord(state)]),
        })),
        ...chunks(grants).map((rows) => ({
          sql: `INSERT OR REPLACE INTO ledger_grants (key, wallet, amount, result, at) VALUES ${rows.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
          params: rows.flatMap(([key, grant]) => [key, grant.wallet, grant.amount, JSON.stringify(grant.result), grant.at]),
        })),
        ...chunks(externals).map((rows) => ({
          sql: `INSERT INTO ledger_external_credits (source, external_id, wallet, units, units_per_credit, remainder_key, credits, remainder, at)
             VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
          params: rows.flatMap((row) => [
            row.source,
            row.external_id,
            row.wallet,
            row.units,
            row.units_per_credit,
            row.remainder_key,
            row.credits,
            row.remainder,
            row.at,
          ]),
        })),
        ...chunks(remainders).map((rows) => ({
          sql: `INSERT OR REPLACE INTO ledger_remainders (wallet, remainder_key, units) VALUES ${rows.map(() => '(?, ?, ?)').join(', ')}`,
          params: rows.flatMap((row) => [row.wallet, row.key, row.units.toString()]),
        })),
        ...chunks(keys).map((rows) => ({
          sql: `INSERT OR REPLACE INTO ledger_key_limits (key_id, wallet, limits, spent, day, day_spent)
             VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
          params: rows.flatMap((key) => [
            key.id,
            key.wallet,
            JSON.stringify(key.limits),
            key.spend.spent,
            key.spend.day,
            key.spend.daySpent,
          ]),
        })),
        ...chunks(usage).map((rows) => ({
          sql: `INSERT INTO usage_records (id, wallet, at, kind, request_id, key_id, model, tools, prompt_tokens, completion_tokens, credits, source_id)
             VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
          params: rows.flatMap((row) => [
            row.id,
            row.wallet,
            row.at,
            row.kind,
            row.request_id,
            row.key_id,
            row.model,
            row.tools,
            row.prompt_tokens,
            row.completion_tokens,
            row.credits,
            row.source_id,
          ]),
        })),
      ];
      // One statement is a transaction of its own; charges with their records are one transaction of two.
      if (statements.length === 1) await this.db.run(statements[0].sql, statements[0].params);
      else await this.db.transaction(statements);
    } catch (err) {
      for (const state of wallets) this.drop(state);
      for (const [key] of grants) this.grants.delete(key);
      for (const key of keys) this.dropKey(key);
      throw err;
    }
    this.evict();
  }

  /** Forget a key's copy whose changes did not reach SQLite, and its wallet's (holds count on both). */
  private dropKey(key: KeyState): void {
    key.dropped = true;
    if (this.keys.get(key.id) === key) this.keys.delete(key.id);
    this.dirtyKeys.delete(key);
    const wallet = this.wallets.get(key.wallet);
    if (wallet) this.drop(wallet);
  }

  /** Forget a copy whose changes did not reach SQLite: the next step reads what SQLite has. */
  private drop(state: WalletState): void {
    state.dropped = true;
    if (this.wallets.get(state.address) === state) this.wallets.delete(state.address);
    this.holding.delete(state);
    this.dirty.delete(state);
  }

  /** The wallet's state, read from SQLite on first use (concurrent first uses share one read). */
  private state(wallet: string): Promise<WalletState> | WalletState {
    const address = wallet.toLowerCase();
    const known = this.wallets.get(address);
    if (known) {
      // Most recently used last: eviction takes from the front.
      this.wallets.delete(address);
      this.wallets.set(address, known);
      return known;
    }
    let loading = this.loading.get(address);
    if (!loading) {
      loading = this.load(address).finally(() => this.loading.delete(address));
      this.loading.set(address, loading);
    }
    return loading;
  }

  private async load(address: string): Promise<WalletState> {
    const rows = await this.db.all<{ record: string }>('SELECT record FROM ledger_wallets WHERE address = ?', [address]);
    let stored = { credits: 0, total_deposited: 0, total_spent: 0 };
    if (rows.length > 0) {
      const parsed = storedWalletSchema.safeParse(JSON.parse(rows[0].record));
      // A damaged record must stop the step, never read as an empty wallet.
      if (!parsed.success) throw new Error(`ledger: the record of ${address} is damaged: ${parsed.error.message}`);
      stored = parsed.data;
    }
    const state: WalletState = {
      address,
      credits: stored.credits,
      totalDeposited: stored.total_deposited,
      totalSpent: stored.total_spent,
      holds: new Map(),
      closed: new Map(),
      dropped: false,
    };
    this.wallets.set(address, state);
    // Reads alone must stay bounded too (free mode: balances of ever new wallet headers, no commit).
    this.evict(address);
    return state;
  }

  /**
   * Drop the least recently used wallets that hold nothing and have nothing on its way to SQLite;
   * never `keep`, the wallet just loaded, which its caller is about to use.
   */
  private evict(keep?: string): void {
    if (this.wallets.size <= this.maxWallets) return;
    for (const [address, state] of this.wallets) {
      if (this.wallets.size <= this.maxWallets) break;
      if (address === keep || state.holds.size > 0 || this.dirty.has(state)) continue;
      this.wallets.delete(address);
    }
  }

  private sweep(state: WalletState): void {
    if (state.holds.size === 0) return;
    const now = this.now();
    for (const [id, hold] of state.holds) {
      if (hold.expiresAt > now) continue;
      state.credits += hold.amount;
      if (hold.key) hold.key.held -= hold.amount;
      this.close(state, id, 0);
    }
  }

  private close(state: WalletState, id: string, charged: number): void {
    state.holds.delete(id);
    if (state.holds.size === 0) this.holding.delete(state);
    state.closed.set(id, charged);
    if (state.closed.size > MAX_CLOSED) state.closed.delete(state.closed.keys().next().value!);
  }
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) out.push(items.slice(i, i + ROWS_PER_STATEMENT));
  return out;
}

function addCredits(state: WalletState, amount: number): Balance {
  // Past 2^53 additions round and the invariant deposited = credits + held + spent breaks;
  // total_deposited bounds every other total, so capping it caps them all.
  if (state.totalDeposited + amount > Number.MAX_SAFE_INTEGER) throw new LedgerTotalTooLarge(state.totalDeposited, amount);
  state.credits += amount;
  state.totalDeposited += amount;
  return toBalance(state);
}

/** What SQLite keeps: held credits count as the wallet's (a crash gives holds back). */
function storedRecord(state: WalletState): string {
  let held = 0;
  for (const hold of state.holds.values()) held += hold.amount;
  return `{"credits":${state.credits + held},"total_deposited":${state.totalDeposited},"total_spent":${state.totalSpent}}`;
}

function toBalance(state: WalletState): Balance {
  return { address: state.address, credits: state.credits, total_deposited: state.totalDeposited, total_spent: state.totalSpent };
}

/** Build the ledger over an open connection and start it. */
export async function openEmbeddedLedger(db: SqliteConnection, options: EmbeddedLedgerOptions): Promise<EmbeddedLedger> {
  const ledger = new EmbeddedLedger(db, options);
  await ledger.start();
  return ledger;
}
