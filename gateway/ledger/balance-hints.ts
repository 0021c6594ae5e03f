/**
 * What this process knows of each wallet's spendable balance, for the charges that start work
 * before the ledger has answered (Charge.claimRunAhead, Charge.claimChargeAtEnd): the balance the
 * ledger last reported, less the holds this process took since and the credits its open claims
 * may still spend. A hint only: other requests and instances spend too, and the ledger decides
 * every step.
 *
 * An API key's remaining budget is kept the same way, under `key:<id>`: a claim for a charge
 * made with a key counts the smaller of the two, and is refused while either is unknown.
 *
 * @example
 *   hints.report(wallet, 40)        // a settle answered: 40 left
 *   hints.claim([wallet], 10)       // true: 40 covers 2 × 10; 30 left to claim
 *   hints.unclaim(wallet, 10)       // that charge's ledger step answered
 */
import { LRUCache } from 'lru-cache';

/** Wallets whose reported balance is kept: ~1 MB at most. */
const MAX_WALLETS = 10_000;

export class BalanceHints {
  private readonly reported = new LRUCache<string, number>({ max: MAX_WALLETS });
  /** Credits claimed by charges whose ledger step has not answered yet, per wallet (bounded by the chats in flight). */
  private readonly claimed = new Map<string, number>();

  /** Claim `credits` from each of `names` when every one's hint, after its open claims, covers twice that. */
  claim(names: string[], credits: number): boolean {
    for (const name of names) {
      const reported = this.reported.get(name);
      if (reported === undefined || reported - (this.claimed.get(name) ?? 0) < 2 * credits) return false;
    }
    for (const name of names) this.claimed.set(name, (this.claimed.get(name) ?? 0) + credits);
    return true;
  }

  /** A claim's ledger step answered, or its work ended: it no longer counts. */
  unclaim(wallet: string, credits: number): void {
    const open = (this.claimed.get(wallet) ?? 0) - credits;
    if (open > 0) this.claimed.set(wallet, open);
    else this.claimed.delete(wallet);
  }

  /** The ledger reported the wallet's spendable balance (a settle, a charge, a refusal). */
  report(wallet: string, balance: number): void {
    this.reported.set(wallet, balance);
  }

  /** This process held `credits` more of the wallet. */
  held(wallet: string, credits: number): void {
    const reported = this.reported.get(wallet);
    if (reported !== undefined) this.reported.set(wallet, reported - credits);
  }
}
