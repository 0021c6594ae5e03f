/**
 * What a JSON answer that cost credits says in its headers (chat completions, responses):
 * `x-credits-charged` and the balance after it, `x-credits-remaining`. Streamed answers carry the
 * same in their last event instead.
 *
 * @example
 *   setCreditHeaders(ctx, outcome.credits) // nothing when credits are off
 */
import type { Context } from 'koa';
import type { ChatCredits } from '../chat/chat-types.js';

export function setCreditHeaders(ctx: Context, credits: ChatCredits | undefined): void {
  if (!credits) return;
  ctx.set('x-credits-charged', String(credits.charged));
  ctx.set('x-credits-remaining', String(credits.remaining));
}
