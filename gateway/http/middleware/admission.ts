/**
 * A request's admission checks (the IP's and the wallet's request budgets, the wallet's chat slot)
 * run side by side: each starts as soon as its key is known, and the route's guards wait for all
 * of them at one gate (`admit`) before anything that costs: reading the body, a key's store
 * lookup, the route itself. In cluster mode every check is a Redis command, all sent before any
 * is answered: one round trip for the request's admission instead of one per check. Measured in
 * `bench/cluster-overhead.ts`.
 *
 * A refusal surfaces at the gate in the order the checks started (the IP's budget before the
 * wallet's), whichever Redis answered first; a check that started is counted even when an earlier
 * one refuses, as a refused request always counted against its budgets.
 *
 * @example
 *   startCheck(ctx, limiter.consume(ctx.ip))   // in a guard, instead of awaiting it
 *   await admitted(ctx)                        // the gate: throws the first refusal
 */
import type { Context, Next } from 'koa';
import '../state.js';

const ignore = () => {};

/** Start a check now; its refusal is thrown by the next `admitted(ctx)`. */
export function startCheck(ctx: Context, check: Promise<unknown>): void {
  check.catch(ignore); // a refusal is handled at the gate, not as an unhandled rejection
  (ctx.state.checks ??= []).push(check);
}

/** Wait for every check started so far; the first refusal, in start order, is thrown. */
export async function admitted(ctx: Context): Promise<void> {
  const checks = ctx.state.checks;
  if (checks === undefined) return;
  for (let i = 0; i < checks.length; i++) await checks[i];
  checks.length = 0;
}

/** The gate as a guard: the checks before it decide before anything after it runs. */
export async function admit(ctx: Context, next: Next): Promise<void> {
  await admitted(ctx);
  await next();
}
