/**
 * How chat, tool and MCP code spend credits: the one reserve → settle/release implementation, and
 * the one place free mode is decided. `createApp` picks the charger once — `ledgerCharger(ledger)`
 * with credits on, `NO_CHARGE` in free mode — and every charging path takes that charger, so no
 * path can charge in free mode or skip charging in paid mode.
 *
 * A charge's whole life is in `LedgerCharge` below: the first `cover` reserves (402 when the wallet
 * cannot), later ones grow the hold, `settle` charges the exact cost once, `release` gives the
 * hold back when the work failed. Work whose result is given only after it settles may instead
 * hold nothing and be charged in one step at the end (`claimChargeAtEnd`).
 *
 * A charge made with an API key takes from the key's budgets too, in the same ledger step
 * (ledger/key-budgets.ts): a key over its budget is KeyBudgetExhausted (402, no x402 offer). The
 * shortcuts that start work before the ledger answers count the smaller of the wallet's hint and
 * the key's, and are not taken until this process has heard what the key may still spend.
 *
 * Every charge knows who pays (its `Payer`) and what it bills (its `ChargeOrigin`), both given to
 * `begin`, and what was used (the `UsageDetail` given to `settle`): the step that takes the
 * credits writes the request's one usage record in its commit (key id: the payer's key), however
 * many steps the charge took.
 *
 * @example
 *   const result = await withCharge(charger, { wallet, key }, origin, 1, async () => ({ result: await runTool(), cost: 1 }))
 */
import { InsufficientCredits, KeyBudgetExhausted, ReservationClosed } from '../errors.js';
import { BalanceHints } from './balance-hints.js';
import type { ChargeOptions, Ledger, Reservation, Settlement } from './ledger.js';
import type { ChargeOrigin, SpendUsage, UsageDetail } from './usage.js';

export type { ChargeOrigin, UsageDetail };

export interface Charge {
  /**
   * Make the hold at least `credits`. The first hold throws InsufficientCredits (the request fails
   * with 402); later, a wallet that cannot give more or a hold that expired (its TTL passed)
   * answers false: the work stops and answers with what it has.
   */
  cover(credits: number): Promise<boolean>;
  /**
   * Charge min(cost, held) and return the rest; only the first call charges. Undefined when
   * nothing was held (free mode, or the work never started). A hold that expired while the work
   * ran is charged from a fresh hold of what the wallet still has, so late work is not free and
   * the balance never goes below zero. After claimChargeAtEnd with nothing held: the cost in one
   * step (see there). `usage` (what was used) goes in the request's usage record; none: no tools, no tokens.
   */
  settle(cost: number, usage?: UsageDetail): Promise<Settlement | undefined>;
  /** Give every held credit back, unless already settled (a failed release is left to the TTL). */
  release(): Promise<void>;
  /**
   * Whether work may start while the first hold of `credits` is being taken: nothing is held yet
   * and the wallet's balance last seen by this process covers twice that, so the hold will very
   * likely be granted. A yes counts `credits` against that balance, so a burst of requests on one
   * sighting does not all run ahead. The caller then uses nothing of the work's result before
   * that `cover` resolves (it resolves true or throws), and stops the work when it throws.
   */
  claimRunAhead(credits: number): boolean;
  /**
   * Whether work whose result reaches nobody before `settle` may run holding nothing, to be
   * charged in one ledger step at the end (one round trip and one commit instead of two): the
   * same test and count as `claimRunAhead`. After a yes, `settle(cost)` charges `cost`, or when
   * other requests or instances spent the balance meanwhile what is left of it (as a settle whose
   * hold expired); a wallet left with nothing throws InsufficientCredits, and the result must
   * then not be given. A first `cover` (more work to come) reserves but answers false rather than
   * 402 when the wallet is short, as work has already run.
   */
  claimChargeAtEnd(credits: number): boolean;
}

/** Who pays: the wallet, and the API key the request came with (its budgets are taken from too). */
export interface Payer {
  wallet: string;
  key?: string;
}

/** Opens one charge per piece of work (`origin`: the request it bills); holds nothing until the charge's first `cover`. */
export interface Charger {
  begin(payer: Payer, origin: ChargeOrigin): Charge;
}

const FREE_CHARGE: Charge = {
  cover: async () => true,
  settle: async () => undefined,
  release: async () => {},
  // Nothing to wait for: a free cover answers at once, and a free settle is no step.
  claimRunAhead: () => false,
  claimChargeAtEnd: () => false,
};

/** Free mode: every charge covers anything and charges nothing. */
export const NO_CHARGE: Charger = { begin: () => FREE_CHARGE };

/** Credits on: every charge goes through `ledger`. */
export function ledgerCharger(ledger: Ledger): Charger {
  const hints = new BalanceHints();
  return { begin: (payer, origin) => new LedgerCharge(ledger, payer.wallet, payer.key, origin, hints) };
}

class LedgerCharge implements Charge {
  private reservation: Reservation | undefined;
  /** Set by the first settle or release: the charge is over, whichever came first. */
  private closed: Promise<Settlement | undefined> | undefined;
  /** Credits claimed from the hints (claimRunAhead, claimChargeAtEnd) until the ledger answers. */
  private claimed = 0;
  /** Claimed by claimChargeAtEnd: work runs before any hold, and settle charges in one step. */
  private atEnd = false;

  constructor(
    private readonly ledger: Ledger,
    private readonly wallet: string,
    private readonly key: string | undefined,
    private readonly origin: ChargeOrigin,
    private readonly hints: BalanceHints,
  ) {}

  /** The key's name among the hints (wallet addresses start with 0x). */
  private get keyHint(): string | undefined {
    return this.key === undefined ? undefined : `key:${this.key}`;
  }

  claimRunAhead(credits: number): boolean {
    if (this.reservation || this.closed || this.claimed > 0) return false;
    if (!this.hints.claim([this.wallet, ...(this.keyHint ? [this.keyHint] : [])], credits)) return false;
    this.claimed = credits;
    return true;
  }

  claimChargeAtEnd(credits: number): boolean {
    if (!this.claimRunAhead(credits)) return false;
    this.atEnd = true;
    return true;
  }

  async cover(credits: number): Promise<boolean> {
    if (this.closed) return false;
    if (!this.reservation) {
      try {
        this.reservation = await this.ledger.reserve(this.wallet, credits, this.key);
        this.hints.held(this.wallet, credits);
        if (this.keyHint) this.hints.held(this.keyHint, credits);
      } catch (err) {
        if (err instanceof KeyBudgetExhausted && this.keyHint) this.hints.report(this.keyHint, err.remaining);
        else if (err instanceof InsufficientCredits) this.hints.report(this.wallet, err.balance);
        else throw err;
        if (this.atEnd) return false;
        throw err;
      } finally {
        this.endClaim();
      }
      return true;
    }
    const more = credits - this.reservation.amount;
    if (more <= 0) return true;
    try {
      this.reservation = await this.ledger.extend(this.reservation, more);
      this.hints.held(this.wallet, more);
      if (this.keyHint) this.hints.held(this.keyHint, more);
      return true;
    } catch (err) {
      if (err instanceof InsufficientCredits || err instanceof KeyBudgetExhausted || err instanceof ReservationClosed) return false;
      throw err;
    }
  }

  settle(cost: number, detail: UsageDetail = NOTHING_USED): Promise<Settlement | undefined> {
    if (this.closed) return this.closed;
    const reservation = this.reservation;
    const usage: SpendUsage = { ...this.origin, ...detail };
    if (!reservation && this.atEnd) return this.chargeAtEnd(cost, usage);
    this.endClaim();
    this.closed = reservation ? settleOrRecharge(this.ledger, reservation, cost, usage).then(this.saw) : Promise.resolve(undefined);
    return this.closed;
  }

  /** The one step of a charge claimed at the end; a wallet left with nothing closes it with nothing charged. */
  private chargeAtEnd(cost: number, usage: SpendUsage): Promise<Settlement> {
    const charged = chargeWhatIsLeft(this.ledger, this.wallet, cost, { ...(this.key !== undefined ? { key: this.key } : {}), usage })
      .then(this.saw, (err: unknown) => {
        if (err instanceof InsufficientCredits) this.hints.report(this.wallet, err.balance);
        if (err instanceof KeyBudgetExhausted && this.keyHint) this.hints.report(this.keyHint, err.remaining);
        throw err;
      })
      .finally(() => this.endClaim());
    this.closed = charged.catch(() => undefined);
    return charged;
  }

  private readonly saw = (settlement: Settlement): Settlement => {
    this.hints.report(this.wallet, settlement.remaining);
    if (this.keyHint && settlement.keyRemaining !== undefined) this.hints.report(this.keyHint, settlement.keyRemaining);
    // What the key may still spend is for the hints, not for the answer the client reads.
    return { charged: settlement.charged, remaining: settlement.remaining };
  };

  private endClaim(): void {
    if (this.claimed === 0) return;
    this.hints.unclaim(this.wallet, this.claimed);
    if (this.keyHint) this.hints.unclaim(this.keyHint, this.claimed);
    this.claimed = 0;
  }

  async release(): Promise<void> {
    this.endClaim();
    if (!this.reservation || this.closed) return;
    const reservation = this.reservation;
    this.closed = this.ledger.release(reservation).then(
      () => undefined,
      // The reservation's TTL returns the credits; the caller's own error matters more.
      () => undefined,
    );
    await this.closed;
  }
}

const NOTHING_USED: UsageDetail = { tools: {}, promptTokens: 0, completionTokens: 0 };

/**
 * `cost` in one step, or when the wallet (or the key's budget) is short what it has left (never
 * below zero, never past a key's cap); nothing left is InsufficientCredits (KeyBudgetExhausted).
 * Only the charge that succeeds writes the record.
 */
async function chargeWhatIsLeft(ledger: Ledger, wallet: string, cost: number, options: ChargeOptions): Promise<Settlement> {
  let owed = cost;
  for (;;) {
    try {
      return await ledger.charge(wallet, owed, options);
    } catch (err) {
      // Each refusal names what is left, below what it was asked for, so this ends.
      const left = err instanceof InsufficientCredits ? err.balance : err instanceof KeyBudgetExhausted ? err.remaining : 0;
      if (left === 0) throw err;
      owed = left;
    }
  }
}

/**
 * Every hold is at least 1 credit, so a positive cost charged 0 means the hold was gone (expired
 * and swept): charge min(cost, held) again in one step, or what is left of the balance. A settle
 * that charged 0 wrote no record, so the recharge's is the request's one.
 */
async function settleOrRecharge(ledger: Ledger, reservation: Reservation, cost: number, usage: SpendUsage): Promise<Settlement> {
  const settlement = await ledger.settle(reservation, cost, usage);
  if (settlement.charged > 0 || cost === 0) return settlement;
  try {
    const key = reservation.key;
    return await chargeWhatIsLeft(ledger, reservation.wallet, Math.min(cost, reservation.amount), {
      ...(key !== undefined ? { key } : {}),
      usage,
    });
  } catch (err) {
    // Nothing left: the late work goes uncharged rather than below zero (or past the key's cap).
    if (err instanceof InsufficientCredits || err instanceof KeyBudgetExhausted) return settlement;
    throw err;
  }
}

/**
 * Run `work` under a charge of `credits` held up front (402 when the wallet cannot cover them):
 * settled with the cost it reports, released if it throws (the client pays nothing for a failure
 * of ours or a cancelled request). Its result is returned only once charged, so a wallet seen
 * holding plenty holds nothing and is charged in one step after the work (claimChargeAtEnd):
 * 402 then, and the result is dropped, if the balance was spent meanwhile.
 */
export async function withCharge<T>(
  charger: Charger,
  payer: Payer,
  origin: ChargeOrigin,
  credits: number,
  work: () => Promise<{ result: T; cost: number; usage?: UsageDetail }>,
): Promise<T> {
  const charge = charger.begin(payer, origin);
  if (!charge.claimChargeAtEnd(credits)) await charge.cover(credits);
  let outcome: { result: T; cost: number; usage?: UsageDetail };
  try {
    outcome = await work();
  } catch (err) {
    await charge.release();
    throw err;
  }
  await charge.settle(outcome.cost, outcome.usage);
  return outcome.result;
}
