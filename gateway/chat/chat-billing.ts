/**
 * Credits for one chat request, on the accounts charging helper. Before each upstream call the
 * hold is topped up to the cost of what the chat has used so far plus that call's worst case —
 * not to the sum of every call's worst case, which would stop a modest wallet after a few rounds
 * although the real cost is a credit or two. At the end it settles the exact cost of the summed
 * usage, capped at what it held, so the balance never goes below zero. Free mode (no ledger)
 * charges nothing.
 *
 * @example
 *   const billing = new ChatBilling(ledger, wallet)
 *   await billing.cover(creditsToCover(usage, promptTokens, maxOut)) // throws 402 on the first call
 *   const credits = await billing.settle(usage)                      // { charged, remaining }
 */
import { InsufficientCredits, ReservationClosed } from '../errors.js';

import { startCharge, type Charge } from '../accounts/charging.js';
import type { Ledger } from '../accounts/types.js';
import type { ChatCredits } from './chat-types.js';

interface TokenCounts {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * What the hold must reach before the next upstream call: the tokens used so far plus that call's
 * worst case, ceil((used prompt + 2 × used completion + prompt + 2 × max_out) / 1000) credits.
 */
export function creditsToCover(used: TokenCounts, promptTokens: number, maxOutputTokens: number): number {
  const tokens = used.prompt_tokens + 2 * used.completion_tokens + promptTokens + 2 * maxOutputTokens;
  return Math.max(1, Math.ceil(tokens / 1000));
}

/** Cost of a finished chat: max(1, ceil((prompt + 2 × completion) / 1000)) over every call. */
export function chatCost(usage: TokenCounts): number {
  return Math.max(1, Math.ceil((usage.prompt_tokens + 2 * usage.completion_tokens) / 1000));
}

export class ChatBilling {
  private charge?: Charge;
  private closed = false;

  /** `ledger` undefined means free mode. */
  constructor(
    private readonly ledger: Ledger | undefined,
    private readonly wallet: string,
  ) {}

  /**
   * Make the hold at least `credits`. The first hold throws InsufficientCredits (the request fails
   * with 402); later, a wallet that cannot give more or a hold that expired (its TTL passed) returns
   * false: the chat stops and answers with what it has.
   */
  async cover(credits: number): Promise<boolean> {
    if (!this.ledger) return true;
    if (!this.charge) {
      this.charge = await startCharge(this.ledger, { wallet: this.wallet, billing: true, reserve: credits });
      return true;
    }
    const more = credits - this.charge.reservation!.amount;
    if (more <= 0) return true;
    try {
      await this.charge.extend(more);
      return true;
    } catch (err) {
      if (err instanceof InsufficientCredits || err instanceof ReservationClosed) return false;
      throw err;
    }
  }

  /** Charge the cost of `usage` (capped at what is held) and return the rest. */
  async settle(usage: TokenCounts): Promise<ChatCredits | undefined> {
    if (!this.charge || this.closed) return undefined;
    this.closed = true;
    const settlement = await this.charge.settle(chatCost(usage));
    return { charged: settlement.charged, remaining: settlement.remaining };
  }

  /** Give back everything held (nothing was consumed). */
  async release(): Promise<void> {
    if (!this.charge || this.closed) return;
    this.closed = true;
    await this.charge.release();
  }
}
