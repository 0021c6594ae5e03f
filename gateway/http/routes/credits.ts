/**
 * `GET /credits/balance` → `{address, credits, total_deposited, total_spent}` for the calling
 * wallet (integers; an unknown wallet is all zeros). `credits` is what can be spent now.
 *
 * @example
 *   registerCreditRoutes(router, gated, accounts.ledger)
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Ledger } from '../../ledger/ledger.js';
import { callerWallet } from '../middleware/wallet.js';
import { balanceSchema, json, type RouteDoc } from '../openapi/route-doc.js';

export function registerCreditRoutes(router: Router, guard: Middleware, ledger: Ledger): void {
  router.get('/credits/balance', guard, async (ctx) => {
    ctx.body = await ledger.balance(callerWallet(ctx));
  });
}

export const creditRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/credits/balance',
    tag: 'Credits',
    summary: 'Credit balance of the calling wallet',
    access: 'gated',
    response: { description: 'The balance (an unknown wallet is all zeros)', content: json(balanceSchema) },
  },
];
