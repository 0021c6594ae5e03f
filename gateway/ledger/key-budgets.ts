/**
 * An API key's limits and spend, kept by the ledger beside the wallets (both ledgers: a table in
 * the same store, changed in the same commit as the wallet), so a reserve or a charge takes from
 * the wallet and the key's budgets in one atomic step. The key record (keys/) keeps only what
 * describes a key; this is what limits it.
 *
 * A key's remaining budget: the smaller of its lifetime cap less what it spent and holds, and its
 * daily cap less what it spent on this UTC day and holds. A hold counts against both until it
 * settles; a settle counts on the UTC day it happens.
 *
 * @example
 *   keyRemaining({ ...NO_KEY_LIMITS, maxCredits: 50 }, { spent: 20, day: 0, daySpent: 0 }, 5, now) // 25
 */

export interface KeyLimits {
  /** Credits the key may spend in its lifetime; null: no cap. */
  maxCredits: number | null;
  /** Credits the key may spend per UTC day (the day of each settle); null: no cap. */
  maxCreditsPerDay: number | null;
  /** Unix ms after which the key is refused (401 api_key_expired); null: never. */
  expiresAt: number | null;
  /** Tool names, or `server:*`; null: every tool. */
  tools: string[] | null;
  /** Canonical model ids; null: every model. */
  models: string[] | null;
}

export const NO_KEY_LIMITS: KeyLimits = { maxCredits: null, maxCreditsPerDay: null, expiresAt: null, tools: null, models: null };

/** Spend counters as stored: lifetime, and the UTC day (days since the epoch) the daily counter belongs to. */
export interface KeySpend {
  spent: number;
  day: number;
  daySpent: number;
}

/** What the ledger knows of one key: its limits and spend, for listings and for the key cache. */
export interface KeyUsage {
  keyId: string;
  wallet: string;
  limits: KeyLimits;
  /** Lifetime credits charged to the key since its limits row exists. */
  spent: number;
  /** Credits charged on the current UTC day. */
  spentToday: number;
}

export const DAY_MS = 86_400_000;

export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

export function hasAnyLimit(limits: KeyLimits): boolean {
  return (
    limits.maxCredits !== null ||
    limits.maxCreditsPerDay !== null ||
    limits.expiresAt !== null ||
    limits.tools !== null ||
    limits.models !== null
  );
}

export function isExpired(limits: KeyLimits, now: number): boolean {
  return limits.expiresAt !== null && now >= limits.expiresAt;
}

/** Credits spent on `now`'s UTC day (the stored counter belongs to another day: none). */
export function spentToday(spend: KeySpend, now: number): number {
  return spend.day === utcDay(now) ? spend.daySpent : 0;
}

/** What the key may still hold or charge now; Infinity when it has no credit cap. */
export function keyRemaining(limits: KeyLimits, spend: KeySpend, held: number, now: number): number {
  let remaining = Infinity;
  if (limits.maxCredits !== null) remaining = Math.min(remaining, limits.maxCredits - spend.spent - held);
  if (limits.maxCreditsPerDay !== null) remaining = Math.min(remaining, limits.maxCreditsPerDay - spentToday(spend, now) - held);
  return Math.max(0, remaining);
}

/** Count `charged` credits spent now (the daily counter starts again on a new UTC day). */
export function addSpend(spend: KeySpend, charged: number, now: number): KeySpend {
  const day = utcDay(now);
  return { spent: spend.spent + charged, day, daySpent: (spend.day === day ? spend.daySpent : 0) + charged };
}

/**
 * What a settle of `cost` on a hold of `held` may charge: never past the daily cap on the settle's
 * day (a hold taken yesterday counted against yesterday's remaining).
 */
export function settleable(limits: KeyLimits, spend: KeySpend, cost: number, held: number, now: number): number {
  let charged = Math.min(cost, held);
  if (limits.maxCreditsPerDay !== null) charged = Math.min(charged, Math.max(0, limits.maxCreditsPerDay - spentToday(spend, now)));
  if (limits.maxCredits !== null) charged = Math.min(charged, Math.max(0, limits.maxCredits - spend.spent));
  return charged;
}

/**
 * The limits the key cache (keys/api-keys.ts) holds beside a key's record: undefined when the key
 * carries none.
 *
 * @example
 *   new ApiKeys(store, { limitsOf: limitsFrom(ledger) })
 */
export function limitsFrom(ledger: { keyUsage(keyIds: string[]): Promise<Map<string, KeyUsage>> }) {
  return async (keyId: string): Promise<KeyLimits | undefined> => {
    const limits = (await ledger.keyUsage([keyId])).get(keyId)?.limits;
    return limits && hasAnyLimit(limits) ? limits : undefined;
  };
}
