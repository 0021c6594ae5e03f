/**
 * Pay on 402 for the routes that cost credits (chat, tool execution), placed after
 * authentication: a payment never stands in for the API key, it only refills the balance of the
 * wallet that is already known. With a PAYMENT-SIGNATURE header the payment is taken first
 * (x402/payments.ts) and the answer carries PAYMENT-RESPONSE; a request refused for credits
 * answers 402 `insufficient_credits` as always, plus a PAYMENT-REQUIRED offer whose smallest
 * top-up covers the refused hold (x402 v2, specs/transports-v2/http.md).
 *
 * Only an insufficient-credits refusal carries an offer: an API key's own refusals (over its
 * budget, expired, outside its tools or models) are not for a payment to fix, and `beforePaying`
 * (the route's key checks) refuses such a request before its payment is verified or settled.
 *
 * @example
 *   router.post('/v1/chat/completions', gated, x402Payment(payments, publicUrl), handler)
 */
import type { Context, Next } from 'koa';
import { z } from 'zod';
import { InsufficientCredits } from '../../errors.js';
import type { X402Payments } from '../../x402/payments.js';
import { encodeHeader, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER } from '../../x402/wire.js';
import { callerWallet } from './wallet.js';

export function x402Payment(payments: X402Payments, publicUrl: string, beforePaying: Array<(ctx: Context) => void | Promise<void>> = []) {
  return async function payOn402(ctx: Context, next: Next): Promise<void> {
    const resourceUrl = `${publicUrl}${ctx.path}`;
    const header = ctx.get(PAYMENT_SIGNATURE_HEADER);
    if (header) {
      for (const check of beforePaying) await check(ctx);
      const settlement = await payments.pay(callerWallet(ctx), header, resourceUrl);
      ctx.set(PAYMENT_RESPONSE_HEADER, encodeHeader(settlement));
    }
    try {
      await next();
    } catch (err) {
      if (!(err instanceof InsufficientCredits)) throw err;
      throw new InsufficientCredits(err.balance, err.needed, payments.offerHeaders(resourceUrl, err.needed - err.balance));
    }
  };
}

/** What the OpenAPI entries of the routes that take payments add (request header, response header, the 402's offer). */
export const x402RouteDocs = {
  headers: z.object({
    'payment-signature': z.string().optional().meta({
      description:
        'x402 v2 payment (base64 JSON PaymentPayload, scheme exact) answering a PAYMENT-REQUIRED offer; tops up this wallet first',
    }),
  }),
  responseHeaders: { 'payment-response': 'With a PAYMENT-SIGNATURE: the x402 settlement (base64 JSON SettleResponse)' },
  errorHeaders: {
    402: { 'payment-required': 'With x402 on: the offer (base64 JSON x402 v2 PaymentRequired), also after a refused payment' },
  },
  description:
    ' With x402 on, a 402 insufficient_credits also carries PAYMENT-REQUIRED (base64 JSON x402 v2 PaymentRequired: top-ups in a ' +
    'stablecoin); retrying with PAYMENT-SIGNATURE credits the wallet once and serves the request. A refused payment is 402 ' +
    'payment_invalid; an unreachable facilitator 503 facilitator_unavailable; an unknown settlement outcome 503 payment_pending.',
};
