/**
 * The ledger's contract with the rest of the gateway. Credits are integers. Two implementations:
 * the embedded ledger (embedded-ledger.ts: memory, group-committed to SQLite) and the PostgreSQL
 * ledger (postgres-ledger.ts, cluster mode); `test/gateway/ledger/ledger-contract.ts` holds both
 * to the same suite. Each step that moves credits in or out writes its usage record (usage.ts) in
 * the same commit.
 */
import type { KeyLimits, KeyUsage } from './key-budgets.js';
import type { SpendUsage } from './usage.js';

export interface Balance {
  address: string;
  credits: number;
  total_deposited: number;
  total_spent: number;
}

/** Credits held for one piece of work until it settles or is released (or its TTL passes). */
export interface Reservation {
  id: string;
  wallet: string;
  /** Credits held in total (grows with `extend`). */
  amount: number;
  /** The API key whose budgets hold it too, when one was named. */
  key?: string;
}

export interface Settlement {
  /** Credits actually charged: min(cost, reserved). */
  charged: number;
  /** Spendable balance after settling. */
  remaining: number;
  /** What the named key may still spend (Infinity: no credit cap); absent when no key was named. */
  keyRemaining?: number;
}

/** Where a credit paid from outside the gateway came from; each source names its payments its own way. */
export type ExternalSource = 'deposit' | 'x402';

/**
 * A payment made outside the gateway (an on-chain deposit, an x402 payment), to be turned into
 * credits once and only once.
 */
export interface ExternalCredit {
  wallet: string;
  source: ExternalSource;
  /** The payment's permanent identity within its source, e.g. `8453:0x<tx hash>:<log index>`. */
  externalId: string;
  /** Atomic units paid (e.g. 1500000 for 1.5 USDC); positive. */
  units: bigint;
  /** Atomic units per credit; positive. */
  unitsPerCredit: bigint;
  /** What the units are (e.g. `8453:0x<token>`): the remainder below one credit is kept per wallet and key. */
  remainderKey: string;
}

export interface ExternalCreditResult {
  /** `credited`: this call applied it; `repeat`: an earlier call did, and nothing was added now. */
  status: 'credited' | 'repeat';
  /** Credits this payment added (on a repeat: what the first call added). */
  credits: number;
  /** The wallet's units below one credit under this remainder key, right after the payment was applied. */
  remainder: bigint;
  /** The wallet's balance now. */
  balance: Balance;
}

/** A key's limits to store, with the wallet it belongs to. */
export interface KeyLimitsChange {
  keyId: string;
  wallet: string;
  limits: KeyLimits;
}

/** What a one-step `charge` names beside the wallet. */
export interface ChargeOptions {
  /** The API key the request came with: its budgets are charged too, and it is the record's key id. */
  key?: string;
  /** What the charge bills, for its usage record. */
  usage?: SpendUsage;
}

export interface Ledger {
  balance(wallet: string): Promise<Balance>;
  /**
   * Add credits. With an idempotency key, a repeat returns the first result and grants nothing.
   * A grant writes a `grant` usage record (source id: the idempotency key) in its commit.
   */
  grant(wallet: string, amount: number, idempotencyKey?: string): Promise<Balance>;
  /**
   * Hold `amount` credits, or throw InsufficientCredits (402) with the balance in the message.
   * With `key`, the key's budgets hold them too in the same step: KeyBudgetExhausted (402) when
   * the key may not spend that much, ApiKeyExpired (401) past its expires_at. A key with no
   * limits row is not limited.
   */
  reserve(wallet: string, amount: number, key?: string): Promise<Reservation>;
  /** Hold `amount` more on an existing reservation, or throw InsufficientCredits. */
  extend(reservation: Reservation, amount: number): Promise<Reservation>;
  /**
   * Charge min(cost, reserved) and return the rest, never taking the hold's key past a cap.
   * Idempotent. With `usage`, a settle that charges anything writes its usage record (key id: the
   * hold's key) in the same commit (a repeat writes none).
   */
  settle(reservation: Reservation, cost: number, usage?: SpendUsage): Promise<Settlement>;
  /**
   * Charge `amount` at once, holding nothing: all of it, or nothing and InsufficientCredits when
   * the wallet's spendable credits are short. Durable once it answers, like a settle. Not
   * idempotent: each call is a charge (for work whose result waits for it; see Charge.claimChargeAtEnd).
   * With `key`, the key's budgets are charged too (KeyBudgetExhausted when short), as `reserve`;
   * with `usage`, a charge of anything writes its usage record (key id: `key`) in the same commit.
   */
  charge(wallet: string, amount: number, options?: ChargeOptions): Promise<Settlement>;
  /** Return every held credit. Idempotent. */
  release(reservation: Reservation): Promise<void>;
  /**
   * Credit an outside payment in one atomic step: floor((remainder + units) / unitsPerCredit)
   * credits (into credits and total_deposited), the new remainder, and a permanent record of
   * (source, externalId), so any later call for it adds nothing and answers `repeat`. The same id
   * with another wallet, units or rate is ExternalCreditConflict (409); a total past 2^53 − 1 is
   * LedgerTotalTooLarge and records nothing. A credited payment writes a usage record (kind: its
   * source, source id: its id) in the same commit; a repeat writes none.
   */
  creditExternal(credit: ExternalCredit): Promise<ExternalCreditResult>;
  /** Store a key's limits (created or changed); its spend counters are kept. */
  setKeyLimits(change: KeyLimitsChange): Promise<void>;
  /** Limits and spend of the keys that have a limits row (others are absent). */
  keyUsage(keyIds: string[]): Promise<Map<string, KeyUsage>>;
}
