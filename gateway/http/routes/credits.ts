/**
 * `GET /credits/balance` → `{address, credits, total_deposited, total_spent}` for the calling
 * wallet (integers; an unknown wallet is all zeros). `credits` is what can be spent now.
 * `GET /credits/usage` → the wallet's usage records, newest first (ledger/usage-query.ts), or
 * their totals per day, model or key; a key carrying limits sees only its own (key-scope.ts).
 *
 * @example
 *   registerCreditRoutes(router, gated, { ledger: stores.ledger, usage: stores.usage })
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { Ledger } from '../../ledger/ledger.js';
import type { UsageHistory } from '../../ledger/usage.js';
import { callerWallet } from '../middleware/wallet.js';
import { ownRecordsOnly } from '../key-scope.js';
import { balanceSchema, json, type RouteDoc } from '../openapi/route-doc.js';
import { usageAnswer, usageQuerySchema } from '../../ledger/usage-query.js';
import { usageListSchema, usageTotalsSchema } from '../openapi/usage-schemas.js';

export interface CreditRouteDeps {
  ledger: Ledger;
  usage: UsageHistory;
}

export function registerCreditRoutes(router: Router, guard: Middleware, deps: CreditRouteDeps): void {
  router.get('/credits/balance', guard, async (ctx) => {
    ctx.body = await deps.ledger.balance(callerWallet(ctx));
  });

  router.get('/credits/usage', guard, async (ctx) => {
    ctx.body = await usageAnswer(deps.usage, callerWallet(ctx), ctx.query, ownRecordsOnly(ctx));
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
  {
    method: 'get',
    path: '/credits/usage',
    tag: 'Credits',
    summary: 'Usage records of the calling wallet',
    description:
      'One record per billed request (chat, response, message, tool, mcp) and per credit added (grant, deposit, x402), ' +
      'newest first, with cursor paging; or, with `group_by`, totals per UTC day, model or key for the filtered window. ' +
      'Records older than `usage.retentionDays` are swept. Free mode writes none.',
    access: 'gated',
    query: usageQuerySchema,
    response: { description: 'A page of records, or totals', content: json(z.union([usageListSchema, usageTotalsSchema])) },
    errors: [400],
  },
];
