/**
 * Credits for one chat request. Before each upstream call the request holds that call's worst
 * case (reserve the first time, extend afterwards); at the end it settles the exact cost of the
 * summed usage, capped at what it held, so the balance never goes below zero. Free mode (no
 * ledger) charges nothing.
 *
 * @example
 *   const billing = new ChatBilling(ledger, wallet)
 *   await billing.cover(worstCaseCredits(promptTokens, maxOut)) // throws 402 on the first call
 *   const credits = await billing.settle(usage)                 // { charged, remaining }
 */
import { InsufficientCredits } from '../errors.js';
import type { Ledger, Reservation } from '../accounts/types.js';
import type { ChatCredits } from './chat-types.js';

/** Worst case of one upstream call: ceil((prompt + 2 × max_out) / 1000) credits. */
export function worstCaseCredits(promptTokens: number, maxOutputTokens: number): number {
  return Math.max(1, Math.ceil((promptTokens + 2 * maxOutputTokens) / 1000));
}

/** Cost of a finished chat: max(1, ceil((prompt + 2 × completion) / 1000)) over every call. */
export function chatCost(usage: { prompt_tokens: number; completion_tokens: number }): number {
  return Math.max(1, Math.ceil((usage.prompt_tokens + 2 * usage.completion_tokens) / 1000));
}

export class ChatBilling {
  private reservation?: Reservation;
  private closed = false;

  /** `ledger` undefined means free mode. */
  constructor(
    private readonly ledger: Ledger | undefined,
    private readonly wallet: string,
  ) {}

  get enabled(): boolean {
    return this.ledger !== undefined;
  }

  /** Credits held so far. */
  get reserved(): number {
    return this.reservation?.amount ?? 0;
  }

  /**
   * Hold `credits` more for the next upstream call. The first hold throws InsufficientCredits
   * (the request fails with 402); a later one returns false (the chat stops and answers).
   */
  async cover(credits: number): Promise<boolean> {
    if (!this.ledger) return true;
    if (!this.reservation) {
      this.reservation = await this.ledger.reserve(this.wallet, credits);
      return true;
    }
    try {
      this.reservation = await this.ledger.extend(this.reservation, credits);
      return true;
    } catch (err) {
      if (err instanceof InsufficientCredits) return false;
      throw err;
    }
  }

  /** Charge the cost of `usage` (capped at what is held) and return the rest. */
  async settle(usage: { prompt_tokens: number; completion_tokens: number }): Promise<ChatCredits | undefined> {
    if (!this.ledger || !this.reservation || this.closed) return undefined;
    this.closed = true;
    const settlement = await this.ledger.settle(this.reservation, chatCost(usage));
    return { charged: settlement.charged, remaining: settlement.remaining };
  }

  /** Give back everything held (nothing was consumed). */
  async release(): Promise<void> {
    if (!this.ledger || !this.reservation || this.closed) return;
    this.closed = true;
    await this.ledger.release(this.reservation);
  }
}
