/**
 * The ledger's contract with the rest of the gateway. Credits are integers. Implemented over
 * Keyv in this folder; every write for one wallet is serialized in this process.
 */

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
}

export interface Settlement {
  /** Credits actually charged: min(cost, reserved). */
  charged: number;
  /** Spendable balance after settling. */
  remaining: number;
}

export interface Ledger {
  balance(wallet: string): Promise<Balance>;
  /** Add credits. With an idempotency key, a repeat returns the first result and grants nothing. */
  grant(wallet: string, amount: number, idempotencyKey?: string): Promise<Balance>;
  /** Hold `amount` credits, or throw InsufficientCredits (402) with the balance in the message. */
  reserve(wallet: string, amount: number): Promise<Reservation>;
  /** Hold `amount` more on an existing reservation, or throw InsufficientCredits. */
  extend(reservation: Reservation, amount: number): Promise<Reservation>;
  /** Charge min(cost, reserved) and return the rest. Idempotent. */
  settle(reservation: Reservation, cost: number): Promise<Settlement>;
  /** Return every held credit. Idempotent. */
  release(reservation: Reservation): Promise<void>;
}
