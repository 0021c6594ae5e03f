/**
 * What a billed request is, for its usage record: the kind of request and its id (x-request-id).
 * Every route that charges opens its charge with this and its payer (key-scope.ts's `payerOf`:
 * the wallet and the API key, which is also the record's key id).
 *
 * @example
 *   await withCharge(charger, payerOf(ctx), chargeOrigin(ctx, 'tool'), 1, run)
 */
import type { Context } from 'koa';
import './state.js';
import type { ChargeOrigin, SpendKind } from '../ledger/usage.js';

export function chargeOrigin(ctx: Context, kind: SpendKind, model: string | null = null): ChargeOrigin {
  return { kind, requestId: ctx.state.requestId, model };
}
