/**
 * How chat and tool code spend credits — the one reserve → settle/release implementation: reserve
 * the worst case before the work, grow the hold as the work asks for more, settle the exact cost
 * after it, release on failure. With billing off (free mode) nothing touches the ledger. A
 * reservation that cannot be made is a 402 `insufficient_credits` naming the balance.
 *
 * @example
 *   const result = await withCharge(ledger, { wallet, billing: ctx.state.billing, reserve: 1 }, async () => {
 *     const value = await runTool()
 *     return { result: value, cost: 1 }
 *   })
 */
import { InsufficientCredits } from '../errors.js';
import type { Ledger, Reservation, Settlement } from './types.js';

export interface Charge {
  /** The hold, or undefined when billing is off. */
  readonly reservation: Reservation | undefined;
  /** Hold `amount` more (e.g. before another upstream call); InsufficientCredits or ReservationClosed when it cannot. */
  extend(amount: number): Promise<void>;
  /**
   * Charge min(cost, held) and return the rest; only the first call charges. A hold that expired
   * while the work ran (its credits went back to the wallet) is charged from a fresh hold of what
   * the wallet still has, so late work is not free and the balance never goes below zero. With
   * billing off: `{charged: 0, remaining: 0}`.
   */
  settle(cost: number): Promise<Settlement>;
  /** Give every held credit back (a release that fails is left to the reservation's TTL). */
  release(): Promise<void>;
}

export interface ChargeOptions {
  wallet: string;
  /** `ctx.state.billing`: false in free mode. */
  billing: boolean;
  /** Credits to hold before the work starts (its worst case). */
  reserve: number;
}

const FREE: Charge = {
  reservation: undefined,
  extend: async () => {},
  settle: async () => ({ charged: 0, remaining: 0 }),
  release: async () => {},
};

/** Reserve up front; throws InsufficientCredits (402) when the wallet cannot cover `reserve`. */
export async function startCharge(ledger: Ledger | undefined, options: ChargeOptions): Promise<Charge> {
  if (!options.billing || !ledger) return FREE;
  let reservation = await ledger.reserve(options.wallet, options.reserve);
  let settled: Promise<Settlement> | undefined;
  return {
    get reservation() {
      return reservation;
    },
    async extend(amount) {
      reservation = await ledger.extend(reservation, amount);
    },
    settle(cost) {
      settled ??= settleOrRecharge(ledger, reservation, cost);
      return settled;
    },
    async release() {
      try {
        await ledger.release(reservation);
      } catch {
        // The reservation's TTL returns the credits; the caller's own error matters more.
      }
    },
  };
}

/**
 * Every hold is at least 1 credit, so a positive cost charged 0 means the hold was gone (expired
 * and swept): charge min(cost, held, balance) again from a fresh hold.
 */
async function settleOrRecharge(ledger: Ledger, reservation: Reservation, cost: number): Promise<Settlement> {
  const settlement = await ledger.settle(reservation, cost);
  if (settlement.charged > 0 || cost === 0) return settlement;
  let owed = Math.min(cost, reservation.amount, settlement.remaining);
  // Another request may spend between the read and the hold: retry with what is left.
  while (owed > 0) {
    try {
      const fresh = await ledger.reserve(reservation.wallet, owed);
      return await ledger.settle(fresh, owed);
    } catch (err) {
      if (!(err instanceof InsufficientCredits)) throw err;
      owed = Math.min(owed - 1, (await ledger.balance(reservation.wallet)).credits);
    }
  }
  return settlement;
}

/**
 * Run `work` under a charge: settled with the cost it reports, released if it throws (the
 * client pays nothing for a failure of ours or a cancelled request).
 */
export async function withCharge<T>(
  ledger: Ledger | undefined,
  options: ChargeOptions,
  work: (charge: Charge) => Promise<{ result: T; cost: number }>,
): Promise<T> {
  const charge = await startCharge(ledger, options);
  let outcome: { result: T; cost: number };
  try {
    outcome = await work(charge);
  } catch (err) {
    await charge.release();
    throw err;
  }
  await charge.settle(outcome.cost);
  return outcome.result;
}
