/**
 * The credit ledger over Keyv. One record per wallet holds the spendable balance, the totals and
 * the open reservations, so every ledger step is one read and one write of one value — atomic in
 * SQLite — and steps for one wallet are serialized in this process (the DATA_DIR lock makes this
 * process the only writer). Invariant: total_deposited = credits + held + total_spent.
 *
 * Being the only writer also lets a step start from the record it last committed instead of
 * reading and validating it again (a busy wallet's record holds its last 256 outcomes, so that
 * read was most of a step's cost). The copy kept is always what the store holds: a step whose
 * write fails forgets it, and the next step reads the store.
 *
 * @example
 *   const ledger = await openLedger(store, { reservationTtlMs: 360_000 })
 *   const hold = await ledger.reserve(wallet, 5)     // or InsufficientCredits (402)
 *   const { charged } = await ledger.settle(hold, 3)  // charges 3, returns 2
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { IdempotencyConflict, InsufficientCredits, LedgerTotalTooLarge, ReservationClosed } from '../errors.js';
import type { AccountsStore } from './store.js';
import { KeyedMutex } from './keyed-mutex.js';
import type { Balance, Ledger, Reservation, Settlement } from './types.js';

/** Settle/release outcomes kept per wallet so a repeat answers the same (newest first kept). */
const MAX_CLOSED = 256;
/** Idempotent grants remembered inside the wallet record (the global index keeps them longer). */
const MAX_GRANTS = 64;
const IDEMPOTENCY_TTL_MS = 30 * 24 * 3_600_000;
/** Committed wallet records kept in memory, least recently used dropped first. */
const MAX_CACHED_WALLETS = 512;

const count = z.number().int().nonnegative();
const walletRecordSchema = z.object({
  credits: count,
  total_deposited: count,
  total_spent: count,
  holds: z.record(z.string(), z.object({ amount: count, expires_at: z.number() })),
  closed: z.record(z.string(), z.object({ charged: count, at: z.number() })),
  grants: z.record(z.string(), z.object({ at: z.number(), result: z.object({ address: z.string(), credits: count, total_deposited: count, total_spent: count }) })),
});
type WalletRecord = z.infer<typeof walletRecordSchema>;

const idempotencySchema = z.object({
  wallet: z.string(),
  amount: count,
  result: walletRecordSchema.shape.grants.valueType.shape.result.optional(),
});

export interface LedgerOptions {
  reservationTtlMs: number;
  /** How often open reservations are swept; default a quarter of the TTL (50 ms … 30 s). */
  sweepIntervalMs?: number;
  /** Where sweeper failures go (the logger); they never crash the process. */
  onSweepError?: (err: unknown) => void;
  now?: () => number;
}

function emptyRecord(): WalletRecord {
  return { credits: 0, total_deposited: 0, total_spent: 0, holds: {}, closed: {}, grants: {} };
}

function positiveInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
}

/**
 * Keep the `max` newest entries by `at` (among equal `at`, the earlier added). Entries arrive one
 * at a time, so the usual case is one too many: drop the oldest in place rather than sorting.
 */
function newestEntries<V extends { at: number }>(entries: Record<string, V>, max: number): Record<string, V> {
  let size = 0;
  let oldest: string | undefined;
  let oldestAt = Infinity;
  for (const id in entries) {
    size++;
    const at = entries[id].at;
    if (at <= oldestAt) {
      oldest = id;
      oldestAt = at;
    }
  }
  if (size <= max) return entries;
  if (size === max + 1) {
    delete entries[oldest!];
    return entries;
  }
  return Object.fromEntries(
    Object.entries(entries)
      .sort((a, b) => b[1].at - a[1].at)
      .slice(0, max),
  );
}

export class KeyvLedger implements Ledger {
  private readonly mutex = new KeyedMutex();
  /** Each recently used wallet's record as last committed (see the file comment). */
  private readonly committed = new Map<string, WalletRecord>();
  /** Wallets that may hold open reservations: the only ones the timer needs to visit. */
  private readonly holding = new Set<string>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly store: AccountsStore,
    private readonly options: LedgerOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Find reservations left open by a previous process and start the expiry timer. */
  async start(): Promise<void> {
    for (const wallet of await this.store.keysIn('balances')) {
      const record = await this.load(wallet);
      if (Object.keys(record.holds).length > 0) this.holding.add(wallet);
    }
    const ttl = this.options.reservationTtlMs;
    const interval = this.options.sweepIntervalMs ?? Math.min(30_000, Math.max(50, Math.floor(ttl / 4)));
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweepAll()
        .catch((err: unknown) => this.options.onSweepError?.(err))
        .finally(() => (this.sweeping = undefined));
    }, interval);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** Release every expired reservation of every wallet that holds any. */
  async sweepAll(): Promise<void> {
    for (const wallet of [...this.holding]) await this.update(wallet, () => ({ value: undefined, write: false }));
  }

  async balance(wallet: string): Promise<Balance> {
    const address = wallet.toLowerCase();
    // Reads need no lock: every write replaces the whole record, so any read sees one committed
    // state. Only when a hold has expired does the read go through the lock to sweep it.
    const record = await this.load(address);
    const now = this.now();
    if (Object.values(record.holds).every((hold) => hold.expires_at > now)) return toBalance(address, record);
    return this.update(address, (current) => ({ value: toBalance(address, current), write: false }));
  }

  async grant(wallet: string, amount: number, idempotencyKey?: string): Promise<Balance> {
    positiveInteger(amount, 'amount');
    const address = wallet.toLowerCase();
    if (idempotencyKey === undefined) return this.update(address, (record) => ({ value: addCredits(address, record, amount), write: true }));
    // The wallet record is the commit point (it remembers the key with the result); the global
    // index only says which wallet to look in, and carries the result once committed.
    return this.mutex.run(`idempotency:${idempotencyKey}`, async () => {
      const prior = idempotencySchema.safeParse(await this.store.idempotency.get(idempotencyKey));
      if (prior.success) {
        if (prior.data.wallet !== address || prior.data.amount !== amount) throw new IdempotencyConflict();
        if (prior.data.result) return prior.data.result;
      } else {
        await this.store.idempotency.set(idempotencyKey, { wallet: address, amount }, IDEMPOTENCY_TTL_MS);
      }
      const result = await this.update(address, (record) => {
        // Copies in and out: the record outlives the step (it stays cached), callers' objects must not alias it.
        const done = record.grants[idempotencyKey];
        if (done) return { value: { ...done.result }, write: false };
        const balance = addCredits(address, record, amount);
        record.grants[idempotencyKey] = { at: this.now(), result: { ...balance } };
        record.grants = newestEntries(record.grants, MAX_GRANTS);
        return { value: balance, write: true };
      });
      await this.store.idempotency.set(idempotencyKey, { wallet: address, amount, result }, IDEMPOTENCY_TTL_MS);
      return result;
    });
  }

  reserve(wallet: string, amount: number): Promise<Reservation> {
    positiveInteger(amount, 'amount');
    return this.update(wallet, (record, address) => {
      if (record.credits < amount) throw new InsufficientCredits(record.credits, amount);
      const id = `res_${randomBytes(12).toString('base64url')}`;
      record.credits -= amount;
      record.holds[id] = { amount, expires_at: this.now() + this.options.reservationTtlMs };
      this.holding.add(address);
      return { value: { id, wallet: address, amount }, write: true };
    });
  }

  extend(reservation: Reservation, amount: number): Promise<Reservation> {
    positiveInteger(amount, 'amount');
    return this.update(reservation.wallet, (record) => {
      const hold = record.holds[reservation.id];
      if (!hold) throw new ReservationClosed(reservation.id);
      if (record.credits < amount) throw new InsufficientCredits(record.credits, amount);
      record.credits -= amount;
      hold.amount += amount;
      // Work that asks for more is alive: its hold lives another full TTL.
      hold.expires_at = this.now() + this.options.reservationTtlMs;
      return { value: { ...reservation, amount: hold.amount }, write: true };
    });
  }

  settle(reservation: Reservation, cost: number): Promise<Settlement> {
    if (!Number.isSafeInteger(cost) || cost < 0) throw new RangeError(`cost must be a non-negative integer, got ${cost}`);
    return this.update(reservation.wallet, (record) => {
      const closed = record.closed[reservation.id];
      if (closed) return { value: { charged: closed.charged, remaining: record.credits }, write: false };
      const hold = record.holds[reservation.id];
      // Unknown: expired long ago and forgotten. Its credits already went back; charge nothing.
      if (!hold) return { value: { charged: 0, remaining: record.credits }, write: false };
      const charged = Math.min(cost, hold.amount);
      record.credits += hold.amount - charged;
      record.total_spent += charged;
      this.close(record, reservation.id, charged);
      return { value: { charged, remaining: record.credits }, write: true };
    });
  }

  async release(reservation: Reservation): Promise<void> {
    await this.update(reservation.wallet, (record) => {
      const hold = record.holds[reservation.id];
      if (!hold) return { value: undefined, write: false };
      record.credits += hold.amount;
      this.close(record, reservation.id, 0);
      return { value: undefined, write: true };
    });
  }

  private close(record: WalletRecord, id: string, charged: number): void {
    delete record.holds[id];
    record.closed[id] = { charged, at: this.now() };
    record.closed = newestEntries(record.closed, MAX_CLOSED);
  }

  private async load(address: string): Promise<WalletRecord> {
    const raw: unknown = await this.store.balances.get(address);
    if (raw === undefined) return emptyRecord();
    const parsed = walletRecordSchema.safeParse(raw);
    // A damaged record must stop the step, never read as an empty wallet.
    if (!parsed.success) throw new Error(`ledger: the record of ${address} is damaged: ${parsed.error.message}`);
    return parsed.data;
  }

  /**
   * The one way to touch a wallet: serialized per wallet, expired reservations swept first,
   * written back when the step (or the sweep) changed anything.
   */
  private update<T>(wallet: string, step: (record: WalletRecord, address: string) => { value: T; write: boolean }): Promise<T> {
    const address = wallet.toLowerCase();
    return this.mutex.run(address, async () => {
      const cached = this.committed.get(address);
      const record = cached ?? (await this.load(address));
      // The step changes `record` in place: until its write has landed it is not the committed
      // record, so it leaves the cache and returns only once the store holds it.
      this.committed.delete(address);
      const swept = this.sweep(record);
      let outcome: { value: T; write: boolean };
      try {
        outcome = step(record, address);
      } catch (err) {
        // A refused step changed nothing, but the sweep before it did: keep that.
        if (swept) await this.store.balances.set(address, record);
        throw err;
      }
      const { value, write } = outcome;
      if (swept || write) await this.store.balances.set(address, record);
      this.remember(address, record);
      if (Object.keys(record.holds).length === 0) this.holding.delete(address);
      return value;
    });
  }

  private remember(address: string, record: WalletRecord): void {
    this.committed.set(address, record);
    if (this.committed.size > MAX_CACHED_WALLETS) this.committed.delete(this.committed.keys().next().value!);
  }

  private sweep(record: WalletRecord): boolean {
    const now = this.now();
    let changed = false;
    for (const [id, hold] of Object.entries(record.holds)) {
      if (hold.expires_at > now) continue;
      record.credits += hold.amount;
      this.close(record, id, 0);
      changed = true;
    }
    return changed;
  }
}

function addCredits(address: string, record: WalletRecord, amount: number): Balance {
  // Past 2^53 additions round and the invariant deposited = credits + held + spent breaks;
  // total_deposited bounds every other total, so capping it caps them all.
  if (record.total_deposited + amount > Number.MAX_SAFE_INTEGER) throw new LedgerTotalTooLarge(record.total_deposited, amount);
  record.credits += amount;
  record.total_deposited += amount;
  return toBalance(address, record);
}

function toBalance(address: string, record: WalletRecord): Balance {
  return { address, credits: record.credits, total_deposited: record.total_deposited, total_spent: record.total_spent };
}

/** Build the ledger over an open store and start its expiry timer. */
export async function openLedger(store: AccountsStore, options: LedgerOptions): Promise<KeyvLedger> {
  const ledger = new KeyvLedger(store, options);
  await ledger.start();
  return ledger;
}
