import type { Context, Next } from 'koa';
import { RateLimited } from '../../errors.js';
import { admitted } from './admission.js';

/**
 * Per-wallet chat slots every instance shares (cluster mode: leases in Redis with a TTL, so a
 * killed instance cannot keep its slots). Without it, or while it fails, slots are counted in
 * this process.
 */
export interface SharedWalletSlots {
  /** Take one of `cap` slots of `wallet`: its release, or undefined when all are taken. Throws when the store fails. */
  acquire(wallet: string, cap: number): Promise<(() => void) | undefined>;
}

export interface ChatConcurrencyLimits {
  /** Chat requests one wallet may have running at once. */
  chatConcurrencyPerWallet: number;
  /** Chat requests the whole gateway runs at once. */
  chatConcurrencyTotal: number;
}

/**
 * Caps chat requests running at the same time, per wallet and overall: a chat request holds an
 * upstream model and tool servers for seconds to minutes, so a request budget alone does not
 * protect them. Over a cap → 429 `rate_limited` with `Retry-After: 1`. A slot is held until the
 * response has ended (for a streamed answer, until the stream closes). Counters live in the
 * returned middleware, so each app gets its own; the per-wallet cap is cluster-wide when
 * `shared` slots are given (the total cap protects this instance, so it stays per instance).
 *
 * Two steps: `wallet` takes the wallet's slot beside the request's budgets and is the route's
 * admission gate (http/middleware/admission.ts: the budgets and the slot are decided together, one round
 * trip to Redis); `total` takes one of the instance's slots once the body is read, so a client
 * trickling its bodies holds only its own wallet's slots, never the whole gateway's.
 *
 * @example
 *   const slots = chatConcurrency(config.limits)
 *   router.post('/v1/chat/completions', requireWallet(), budget, slots.wallet, readJson, slots.total, handleChat)
 */
export function chatConcurrency(limits: ChatConcurrencyLimits, shared?: SharedWalletSlots) {
  const runningPerWallet = new Map<string, number>();
  let runningTotal = 0;
  const cap = limits.chatConcurrencyPerWallet;
  const tooMany = () => new RateLimited(`Too many chat requests running for this wallet (limit ${cap}); retry when one finishes.`, 1);

  /** This process's count of the wallet's slots: its release, or undefined when all are taken. */
  function localSlot(wallet: string): (() => void) | undefined {
    const mine = runningPerWallet.get(wallet) ?? 0;
    if (mine >= limits.chatConcurrencyPerWallet) return undefined;
    runningPerWallet.set(wallet, mine + 1);
    return () => {
      const left = (runningPerWallet.get(wallet) ?? 1) - 1;
      if (left === 0) runningPerWallet.delete(wallet);
      else runningPerWallet.set(wallet, left);
    };
  }

  async function walletSlot(wallet: string): Promise<(() => void) | undefined> {
    if (!shared) return localSlot(wallet);
    try {
      return await shared.acquire(wallet, limits.chatConcurrencyPerWallet);
    } catch {
      return localSlot(wallet); // the shared store is down: count in this process until it is back
    }
  }

  return {
    wallet: async function holdWalletSlot(ctx: Context, next: Next): Promise<void> {
      const slot = walletSlot(ctx.state.wallet ?? `ip:${ctx.ip}`);
      try {
        await admitted(ctx);
      } catch (err) {
        void slot.then((releaseRefused) => releaseRefused?.());
        throw err;
      }
      const release = await slot;
      if (!release) throw tooMany();
      await holdUntilAnswered(ctx, next, release);
    },
    total: async function holdTotalSlot(ctx: Context, next: Next): Promise<void> {
      if (runningTotal >= limits.chatConcurrencyTotal) {
        throw new RateLimited('The gateway is running as many chat requests as it can; retry shortly.', 1);
      }
      runningTotal += 1;
      await holdUntilAnswered(ctx, next, () => (runningTotal -= 1));
    },
  };
}

/** Run the rest of the route, then `release` once the response has ended (exactly once). */
async function holdUntilAnswered(ctx: Context, next: Next, release: () => void): Promise<void> {
  let released = false;
  const releaseOnce = () => {
    if (released) return;
    released = true;
    release();
  };
  try {
    await next();
  } finally {
    // A streamed answer keeps running after the handler returns, and a JSON one is written by koa
    // after it: either way the slot is held until the response has ended, so its release (a Redis
    // command in cluster mode) never goes out ahead of the answer.
    if (ctx.res.writableFinished || ctx.res.destroyed) releaseOnce();
    else ctx.res.once('close', releaseOnce);
  }
}
