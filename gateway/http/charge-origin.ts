/**
 * What a billed request is, for its usage record: the kind of request, its id (x-request-id) and
 * the API key it came with. Every route that charges opens its charge with this.
 *
 * @example
 *   await withCharge(charger, callerWallet(ctx), chargeOrigin(ctx, 'tool'), 1, run)
 */
import type { Context } from 'koa';
import './state.js';
import type { ChargeOrigin, SpendKind } from '../ledger/usage.js';

export function chargeOrigin(ctx: Context, kind: SpendKind, model: string | null = null): ChargeOrigin {
  return { kind, requestId: ctx.state.requestId, keyId: ctx.state.apiKey?.id ?? null, model };
}
