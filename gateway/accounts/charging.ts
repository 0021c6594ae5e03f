/**
 * How chat and tool code spend credits: reserve the worst case before the work, settle the
 * exact cost after it, release on failure. With billing off (free mode) nothing touches the
 * ledger. A reservation that cannot be made is a 402 `insufficient_credits` naming the balance.
 *
 * @example
 *   const result = await withCharge(ledger, { wallet, billing: ctx.state.billing, reserve: 1 }, async () => {
 *     const value = await runTool()
 *     return { result: value, cost: 1 }
 *   })
 */
import type { Ledger, Reservation, Settlement } from './types.js';

export interface Charge {
  /** The hold, or undefined when billing is off. */
  readonly reservation: Reservation | undefined;
  /** Hold `amount` more (e.g. before another upstream call); InsufficientCredits when it cannot. */
  extend(amount: number): Promise<void>;
  /** Charge min(cost, held) and return the rest. With billing off: `{charged: 0, remaining: 0}`. */
  settle(cost: number): Promise<Settlement>;
  /** Give every held credit back. */
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
export async function startCharge(ledger: Ledger, options: ChargeOptions): Promise<Charge> {
  if (!options.billing) return FREE;
  let reservation = await ledger.reserve(options.wallet, options.reserve);
  return {
    get reservation() {
      return reservation;
    },
    async extend(amount) {
      reservation = await ledger.extend(reservation, amount);
    },
    settle: (cost) => ledger.settle(reservation, cost),
    release: () => ledger.release(reservation),
  };
}

/**
 * Run `work` under a charge: settled with the cost it reports, released if it throws (the
 * client pays nothing for a failure of ours or a cancelled request).
 */
export async function withCharge<T>(
  ledger: Ledger,
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
