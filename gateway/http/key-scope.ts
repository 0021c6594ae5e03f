/**
 * What an API key's limits (ledger/key-budgets.ts, read by auth into `ctx.state.apiKey.limits`)
 * allow a request: which tools and models, which usage records it reads, and whether a payment
 * may be taken with it. Budgets themselves are the ledger's (every charge names the key:
 * `payerOf`); this is the edge's part.
 *
 * Refusals: 403 tool_not_allowed, 403 model_not_allowed, 403 key_not_allowed (key management with
 * a limited key), and before an x402 payment 402 key_budget_exhausted: none carries an x402 offer.
 *
 * @example
 *   await withCharge(charger, payerOf(ctx), chargeOrigin(ctx, 'tool'), 1, work)
 *   assertToolAllowed(ctx, name, tools)
 */
import type { Context, Next } from 'koa';
import { Forbidden, KeyBudgetExhausted, echoed } from '../errors.js';
import type { Payer } from '../ledger/charging.js';
import { hasAnyLimit, keyRemaining, type KeyLimits } from '../ledger/key-budgets.js';
import type { Ledger } from '../ledger/ledger.js';
import { toolScope, type ToolScope } from '../tools/tool-scope.js';
import type { ToolRunner } from '../tools/types.js';
import { callerWallet } from './middleware/wallet.js';

/** Who pays for the request: its wallet, and its key (whose budgets the ledger takes from too). */
export function payerOf(ctx: Context): Payer {
  const key = ctx.state.apiKey?.id;
  return key === undefined ? { wallet: callerWallet(ctx) } : { wallet: callerWallet(ctx), key };
}

/** A chat plan's key and tool scope (chat/orchestrator.ts's ChatPlan), as spread into it. */
export function keyOfPlan(ctx: Context): { key?: string; toolScope?: ToolScope } {
  const key = ctx.state.apiKey?.id;
  const toolScope = toolScopeOf(ctx);
  return { ...(key !== undefined ? { key } : {}), ...(toolScope ? { toolScope } : {}) };
}

/** The key's limits, when it carries any (and credits are on). */
export function keyLimitsOf(ctx: Context): KeyLimits | undefined {
  const limits = ctx.state.apiKey?.limits;
  return limits && hasAnyLimit(limits) ? limits : undefined;
}

/**
 * The key a request's usage records (GET /credits/usage) are confined to: a key carrying limits
 * (one handed to an agent) sees only its own requests' records; undefined: the whole wallet's.
 */
export function ownRecordsOnly(ctx: Context): string | undefined {
  return keyLimitsOf(ctx) ? ctx.state.apiKey?.id : undefined;
}

/** The tools the key may use; undefined: every tool. */
export function toolScopeOf(ctx: Context): ToolScope | undefined {
  const tools = ctx.state.apiKey?.limits?.tools;
  return tools ? toolScope(tools) : undefined;
}

export function toolNotAllowed(name: string): Forbidden {
  return new Forbidden('tool_not_allowed', `This API key may not use the tool "${echoed(name)}" (see its tools limit).`);
}

/** 403 tool_not_allowed unless the key may use `name`. */
export function assertToolAllowed(ctx: Context, name: string, tools: ToolRunner): void {
  const scope = toolScopeOf(ctx);
  if (scope && !scope.allowsName(name, tools.listTools())) throw toolNotAllowed(name);
}

/** 403 model_not_allowed unless the key may use the model of canonical id `modelId`. */
export function assertModelAllowed(ctx: Context, modelId: string): void {
  const models = ctx.state.apiKey?.limits?.models;
  if (models && !models.includes(modelId)) {
    throw new Forbidden('model_not_allowed', `This API key may not use the model "${echoed(modelId)}" (see its models limit).`);
  }
}

/** 403 key_not_allowed: a key carrying limits may not manage keys (it could raise its own cap). */
export function assertKeyMayManageKeys(ctx: Context): void {
  if (keyLimitsOf(ctx)) {
    throw new Forbidden(
      'key_not_allowed',
      'This API key carries limits, so it may not change or revoke keys: use a key without limits, or sign in with the wallet.',
    );
  }
}

/**
 * Before an x402 payment is verified or settled: a key with nothing left of its budget is refused
 * (402 key_budget_exhausted, no offer), so a payment is never taken for a request its key cannot make.
 */
export function keyBudgetBeforePayment(ledger: Ledger) {
  return async (ctx: Context): Promise<void> => {
    const limits = keyLimitsOf(ctx);
    const key = ctx.state.apiKey?.id;
    if (!limits || key === undefined || (limits.maxCredits === null && limits.maxCreditsPerDay === null)) return;
    const usage = (await ledger.keyUsage([key])).get(key);
    if (!usage) return;
    const now = Date.now();
    const left = keyRemaining(usage.limits, { spent: usage.spent, day: Math.floor(now / 86_400_000), daySpent: usage.spentToday }, 0, now);
    if (left < 1) throw new KeyBudgetExhausted(left, 1);
  };
}

/** Middleware form of a check, for a route's chain. */
export function asMiddleware(check: (ctx: Context) => void | Promise<void>) {
  return async (ctx: Context, next: Next): Promise<void> => {
    await check(ctx);
    await next();
  };
}
