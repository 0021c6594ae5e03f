/**
 * The credit ledger on PostgreSQL, for cluster mode: any number of gateway processes share it.
 * Each step runs inside a PL/pgSQL function (migrations/): one transaction, the wallets' row locks
 * taken first (a charge alone in its batch is one conditional UPDATE). Reserves, settles, charges
 * and releases go in batches (postgres-ledger-batches.ts), one round trip for all that queued together;
 * grants, extends and balances one call each. Nothing is read,
 * changed and written back here, and nothing is cached: the database is the only authority.
 * Invariant, as in the embedded ledger: total_deposited = credits + held + total_spent.
 * Usage records (usage.ts) are written in the transaction of the step they record: inside
 * `ledger_batch` (migrations 13, 14) for settles and charges, in the same statement (a CTE) for a lone
 * charge, a grant and an outside payment.
 *
 * Durability: a grant, an extend, a settle and a charge wait for their commit to reach disk (a
 * batch holding a settle or a charge waits once for all of it). A batch of only reserves and releases commits without
 * waiting (`synchronous_commit = off`): a crash of PostgreSQL itself may forget the last few of
 * them. The settle of a lost reserve finds no hold and charges from a fresh one (charging.ts); a
 * lost release leaves its hold to the TTL. WAL order means no settle that was
 * acknowledged can outlive its reserve. An extend waits (migration 9): a lost one would be
 * settled from the smaller hold, leaving work done uncharged.
 *
 * @example
 *   const ledger = new PostgresLedger(db.sql, { reservationTtlMs: 360_000 })
 *   ledger.start()
 *   const hold = await ledger.reserve(wallet, 5)
 *   await ledger.settle(hold, 3)
 */
import { idSequence } from '../id-sequence.js';
import { nonNegativeInteger, positiveInteger } from './ledger-amounts.js';
import {
  ApiKeyExpired,
  ExternalCreditConflict,
  IdempotencyConflict,
  InsufficientCredits,
  KeyBudgetExhausted,
  LedgerTotalTooLarge,
  ReservationClosed,
} from '../errors.js';
import { validateExternalCredit } from './external-credit.js';
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
import { spentToday, type KeyUsage } from './key-budgets.js';
import type { LedgerStepResult } from './postgres-ledger-batches.js';
import { guarded, type Sql } from '../storage/postgres/database.js';
import type { PendingQuery, Row } from 'postgres';
import { LedgerBatches, type SpendRecord } from './postgres-ledger-batches.js';
import type { CreditKind, SpendUsage } from './usage.js';

/** A piece of SQL spliced into a statement. */
type Fragment = PendingQuery<Row[]>;

export interface PostgresLedgerOptions {
  reservationTtlMs: number;
  /** How often expired holds are swept and old outcomes forgotten; default a quarter of the TTL (50 ms … 30 s). */
  sweepIntervalMs?: number;
  onSweepError?: (err: unknown) => void;
  now?: () => number;
}

/** Closed holds are remembered this long past their TTL, so a late repeated settle answers the same. */
const CLOSED_RETENTION_MS = 24 * 3_600_000;

/** Run a step that adds `amount` to total_deposited; SQLSTATE SY001 (past 2^53 − 1) becomes LedgerTotalTooLarge. */
async function depositing<T>(amount: number, step: () => Promise<T>): Promise<T> {
  try {
    return await guarded(step);
  } catch (err) {
    const sqlError = err as { code?: string; detail?: string };
    if (sqlError.code === 'SY001') throw new LedgerTotalTooLarge(Number(sqlError.detail), amount);
    throw err;
  }
}

export class PostgresLedger implements Ledger {
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private readonly batches: LedgerBatches;
  private readonly nextHoldId = idSequence('res_');
  private readonly nextUsageId = idSequence('use_');

  constructor(
    private readonly sql: Sql,
    private readonly options: PostgresLedgerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.batches = new LedgerBatches(sql, { reservationTtlMs: options.reservationTtlMs, now: this.now });
  }

  /** Start the expiry timer. Every instance runs one; a sweep is idempotent under the row lock. */
  start(): void {
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

  /** Release every expired hold (one wallet at a time) and forget outcomes past retention. */
  async sweepAll(): Promise<void> {
    const now = this.now();
    const wallets = await guarded(
      () => this.sql<Array<{ wallet: string }>>`
      select distinct wallet from reservations where expires_at <= ${now}`,
    );
    for (const { wallet } of wallets) await guarded(() => this.sql`select ledger_balance(${wallet}, ${now}::bigint)`);
    const forgetBefore = now - this.options.reservationTtlMs - CLOSED_RETENTION_MS;
    await guarded(() => this.sql`delete from closed_reservations where closed_at < ${forgetBefore}`);
  }

  async balance(wallet: string): Promise<Balance> {
    const address = wallet.toLowerCase();
    const [row] = await guarded(
      () => this.sql<Array<Omit<Balance, 'address'>>>`
      select * from ledger_balance(${address}, ${this.now()}::bigint)`,
    );
    return { address, credits: row.credits, total_deposited: row.total_deposited, total_spent: row.total_spent };
  }

  async grant(wallet: string, amount: number, idempotencyKey?: string): Promise<Balance> {
    positiveInteger(amount, 'amount');
    const address = wallet.toLowerCase();
    const now = this.now();
    const key = idempotencyKey ?? null;
    // The grant and its usage record in one statement (one transaction); a repeat records nothing.
    const [row] = await depositing(
      amount,
      () => this.sql<Array<Omit<Balance, 'address'> & { status: string }>>`
        with granted as (select * from ledger_grant(${address}, ${amount}::bigint, ${key}::text, ${now}::bigint)),
        recorded as (${this.recordCredit(address, now, 'grant', key, this.sql`${amount}::bigint`, this.sql`granted where status = 'granted'`)})
        select * from granted`,
    );
    if (row.status === 'conflict') throw new IdempotencyConflict();
    return { address, credits: row.credits, total_deposited: row.total_deposited, total_spent: row.total_spent };
  }

  async creditExternal(credit: ExternalCredit): Promise<ExternalCreditResult> {
    validateExternalCredit(credit);
    const address = credit.wallet.toLowerCase();
    const { source, externalId, units, unitsPerCredit, remainderKey } = credit;
    const now = this.now();
    const [row] = await depositing(
      Number(units / unitsPerCredit),
      () => this.sql<Array<Omit<Balance, 'address'> & { status: string; added: number; remainder: string }>>`
        with credited as (select * from ledger_credit_external(${address}, ${source}, ${externalId}, ${units.toString()}::numeric,
          ${unitsPerCredit.toString()}::numeric, ${remainderKey}, ${now}::bigint)),
        recorded as (${this.recordCredit(address, now, source, externalId, this.sql`added`, this.sql`credited where status = 'credited'`)})
        select * from credited`,
    );
    if (row.status === 'conflict') throw new ExternalCreditConflict(source, externalId);
    return {
      status: row.status === 'repeat' ? 'repeat' : 'credited',
      credits: row.added,
      remainder: BigInt(row.remainder),
      balance: { address, credits: row.credits, total_deposited: row.total_deposited, total_spent: row.total_spent },
    };
  }

  async reserve(wallet: string, amount: number, key?: string): Promise<Reservation> {
    positiveInteger(amount, 'amount');
    const address = wallet.toLowerCase();
    const id = this.nextHoldId();
    const row = await this.batches.run({ kind: 'reserve', wallet: address, id, amount, key: key ?? '' });
    if (!row.ok) refused(row, amount);
    return key === undefined ? { id, wallet: address, amount } : { id, wallet: address, amount, key };
  }

  async extend(reservation: Reservation, amount: number): Promise<Reservation> {
    positiveInteger(amount, 'amount');
    const { id, wallet } = reservation;
    const now = this.now();
    const expiresAt = now + this.options.reservationTtlMs;
    const [row] = await guarded(
      () => this.sql<Array<{ status: string; held: number; credits: number }>>`
      select * from ledger_extend(${wallet}, ${id}, ${amount}::bigint, ${now}::bigint, ${expiresAt}::bigint)`,
    );
    if (row.status === 'closed') throw new ReservationClosed(id);
    if (row.status === 'insufficient') throw new InsufficientCredits(row.credits, amount);
    if (row.status === 'key_budget') throw new KeyBudgetExhausted(row.credits, amount);
    return { ...reservation, amount: row.held };
  }

  async settle(reservation: Reservation, cost: number, usage?: SpendUsage): Promise<Settlement> {
    nonNegativeInteger(cost, 'cost');
    const { wallet, id, key } = reservation;
    const row = await this.batches.run({
      kind: 'settle',
      wallet,
      id,
      amount: cost,
      key: key ?? '',
      ...(usage ? { usage: this.spendRecord(usage, key) } : {}),
    });
    return settlement(row, key);
  }

  async charge(wallet: string, amount: number, options: ChargeOptions = {}): Promise<Settlement> {
    nonNegativeInteger(amount, 'amount');
    const { key, usage } = options;
    const row = await this.batches.run({
      kind: 'charge',
      wallet: wallet.toLowerCase(),
      id: '',
      amount,
      key: key ?? '',
      ...(usage ? { usage: this.spendRecord(usage, key) } : {}),
    });
    if (!row.ok) refused(row, amount);
    return settlement(row, key);
  }

  /** A spend's record; its key id is the key the step charges (the hold's, or the charge's). */
  private spendRecord(usage: SpendUsage, key: string | undefined): SpendRecord {
    return {
      id: this.nextUsageId(),
      kind: usage.kind,
      request_id: usage.requestId,
      key_id: key ?? null,
      model: usage.model,
      tools: usage.tools,
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
    };
  }

  /** The INSERT of a credit's usage record, for a CTE beside the step that credits (`credits` and `from` name its result). */
  private recordCredit(wallet: string, now: number, kind: CreditKind, sourceId: string | null, credits: Fragment, from: Fragment) {
    return this.sql`
      insert into usage_records (id, wallet, at, kind, credits, source_id)
      select ${this.nextUsageId()}, ${wallet}, ${now}::bigint, ${kind}, ${credits}, ${sourceId}::text from ${from}`;
  }

  async release(reservation: Reservation): Promise<void> {
    await this.batches.run({ kind: 'release', wallet: reservation.wallet, id: reservation.id, amount: 0, key: '' });
  }

  async setKeyLimits(change: KeyLimitsChange): Promise<void> {
    const { maxCredits, maxCreditsPerDay, expiresAt, tools, models } = change.limits;
    await guarded(
      () => this.sql`
      insert into key_limits (key_id, wallet, max_credits, max_credits_per_day, expires_at, tools, models, day)
      values (${change.keyId}, ${change.wallet.toLowerCase()}, ${maxCredits}, ${maxCreditsPerDay}, ${expiresAt},
        ${tools}, ${models}, ${Math.floor(this.now() / 86_400_000)})
      on conflict (key_id) do update set max_credits = excluded.max_credits, max_credits_per_day = excluded.max_credits_per_day,
        expires_at = excluded.expires_at, tools = excluded.tools, models = excluded.models`,
    );
  }

  async keyUsage(keyIds: string[]): Promise<Map<string, KeyUsage>> {
    const out = new Map<string, KeyUsage>();
    if (keyIds.length === 0) return out;
    const rows = await guarded(() => this.sql<KeyLimitsDbRow[]>`select * from key_limits where key_id = any(${keyIds}::text[])`);
    const now = this.now();
    for (const row of rows) {
      out.set(row.key_id, {
        keyId: row.key_id,
        wallet: row.wallet,
        limits: {
          maxCredits: row.max_credits,
          maxCreditsPerDay: row.max_credits_per_day,
          expiresAt: row.expires_at,
          tools: row.tools,
          models: row.models,
        },
        spent: row.spent,
        spentToday: spentToday({ spent: row.spent, day: row.day, daySpent: row.day_spent }, now),
      });
    }
    return out;
  }
}

/** A row of key_limits (also read by the migrate-to-postgres CLI's checks). */
export interface KeyLimitsDbRow {
  key_id: string;
  wallet: string;
  max_credits: number | null;
  max_credits_per_day: number | null;
  expires_at: number | null;
  tools: string[] | null;
  models: string[] | null;
  spent: number;
  day: number;
  day_spent: number;
}

/** The error a refused reserve or charge answers. */
function refused(row: LedgerStepResult, amount: number): never {
  if (row.refusal === 'key_expired') throw new ApiKeyExpired();
  if (row.refusal === 'key_budget') throw new KeyBudgetExhausted(row.key_remaining ?? 0, amount);
  throw new InsufficientCredits(row.credits, amount);
}

function settlement(row: LedgerStepResult, key: string | undefined): Settlement {
  const base = { charged: row.charged, remaining: row.credits };
  if (key === undefined) return base;
  return { ...base, keyRemaining: row.key_remaining ?? Infinity };
}
