/**
 * Operator routes, behind `requireAdmin(ADMIN_TOKEN, 'disabled')`:
 * `POST /admin/credits/grant {address, amount}` with an `Idempotency-Key` header (a repeat
 * returns the first result and grants nothing), `GET /admin/credits/:address`,
 * `PATCH /admin/api-keys/:id {wallet, …limits}` (change a key's limits, as its owner can with a SIWE proof) and
 * `GET /admin/credits/:address/usage` (the wallet's usage records, as GET /credits/usage answers them).
 *
 * @example
 *   curl -X POST $URL/admin/credits/grant -H "Authorization: Bearer $ADMIN_TOKEN" \
 *     -H "Idempotency-Key: $(uuidgen)" -H 'content-type: application/json' \
 *     -d '{"address":"0x…","amount":100}'
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { z } from 'zod';
import { invalidRequestFrom, InvalidRequest } from '../../errors.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { ApiKeys } from '../../keys/api-keys.js';
import type { KeyLimits } from '../../ledger/key-budgets.js';
import { changeKeyLimits, keyListingSchema, limitFields, type KnownNames } from '../key-limits-body.js';
import type { UsageHistory } from '../../ledger/usage.js';
import { usageAnswer, usageQuerySchema } from '../../ledger/usage-query.js';
import { usageListSchema, usageTotalsSchema } from '../openapi/usage-schemas.js';
import { requireAdmin } from '../middleware/admin-auth.js';
import { parseWalletAddress } from '../../wallet-address.js';
import { MAX_GRANT } from '../../ledger/ledger-amounts.js';
import { balanceSchema, json, type RouteDoc } from '../openapi/route-doc.js';
import { admit } from '../middleware/admission.js';

const grantSchema = z
  .object({
    address: z.string(),
    amount: z.number().int('must be a whole number').positive('must be positive').max(MAX_GRANT, `at most ${MAX_GRANT}`),
  })
  .strict();

const patchKeySchema = z.object({ wallet: z.string().meta({ description: "The key's wallet: 0x + 40 hex" }), ...limitFields }).strict();

function walletParam(value: string, param: string): string {
  const wallet = parseWalletAddress(value);
  if (!wallet) {
    throw new InvalidRequest(
      `${param} must be 0x followed by 40 hex characters; mixed case must be a valid EIP-55 checksum.`,
      param,
      'invalid_wallet_address',
    );
  }
  return wallet;
}

export function registerAdminRoutes(
  router: Router,
  deps: {
    adminToken: string | undefined;
    ledger: Ledger;
    usage: UsageHistory;
    apiKeys: ApiKeys<KeyLimits>;
    known: KnownNames;
    jsonBody: Middleware;
  },
): void {
  const admin = compose([requireAdmin(deps.adminToken, 'disabled'), admit, deps.jsonBody]);

  router.post('/admin/credits/grant', admin, async (ctx) => {
    const parsed = grantSchema.safeParse(ctx.request.body ?? {});
    if (!parsed.success) throw invalidRequestFrom(parsed.error, { unnamed: 'Request body: ' });
    const wallet = walletParam(parsed.data.address, 'address');
    const idempotencyKey = ctx.get('idempotency-key').trim();
    if (!idempotencyKey || idempotencyKey.length > 255) {
      throw new InvalidRequest(
        'An Idempotency-Key header (1 to 255 characters) is required, so a retried grant is never applied twice.',
        'Idempotency-Key',
        'missing_idempotency_key',
      );
    }
    const balance = await deps.ledger.grant(wallet, parsed.data.amount, idempotencyKey);
    ctx.body = { ...balance, granted: parsed.data.amount };
  });

  router.get('/admin/credits/:address', admin, async (ctx) => {
    ctx.body = await deps.ledger.balance(walletParam(ctx.params.address, 'address'));
  });

  router.patch('/admin/api-keys/:id', admin, async (ctx) => {
    const parsed = patchKeySchema.safeParse(ctx.request.body ?? {});
    if (!parsed.success) throw invalidRequestFrom(parsed.error, { unnamed: 'Request body: ' });
    const { wallet, ...fields } = parsed.data;
    ctx.body = await changeKeyLimits(deps, walletParam(wallet, 'wallet'), ctx.params.id, fields, deps.known);
  });

  router.get('/admin/credits/:address/usage', admin, async (ctx) => {
    ctx.body = await usageAnswer(deps.usage, walletParam(ctx.params.address, 'address'), ctx.query);
  });
}

const addressParam = z.object({ address: z.string().meta({ description: 'The wallet: 0x + 40 hex' }) });
const idempotencyHeader = z.object({
  'Idempotency-Key': z.string().min(1).max(255).meta({ description: 'A repeat returns the first result and grants nothing' }),
});

export const adminRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/admin/credits/grant',
    tag: 'Admin',
    summary: 'Grant credits to a wallet',
    description: 'Answers 404 while ADMIN_TOKEN is unset.',
    access: 'admin',
    headers: idempotencyHeader,
    body: grantSchema,
    response: {
      description: 'The new balance and the amount granted',
      content: json(balanceSchema.extend({ granted: z.number().int().positive() })),
    },
    errors: [409],
  },
  {
    method: 'get',
    path: '/admin/credits/:address',
    tag: 'Admin',
    summary: "Any wallet's balance",
    description: 'Answers 404 while ADMIN_TOKEN is unset.',
    access: 'admin',
    pathParams: addressParam,
    response: { description: 'The balance', content: json(balanceSchema) },
    errors: [400],
  },
  {
    method: 'patch',
    path: '/admin/api-keys/:id',
    tag: 'Admin',
    summary: "Change an API key's limits",
    description:
      'A field left out is unchanged, null removes the limit; spend counters are kept. Reaches every instance within 1 s with ' +
      'Redis (30 s without). Answers 404 while ADMIN_TOKEN is unset.',
    access: 'admin',
    pathParams: z.object({ id: z.string() }),
    body: patchKeySchema,
    response: { description: 'The key as its owner lists it', content: json(keyListingSchema) },
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/admin/credits/:address/usage',
    tag: 'Admin',
    summary: "Any wallet's usage records",
    description: 'As GET /credits/usage answers the wallet itself. Answers 404 while ADMIN_TOKEN is unset.',
    access: 'admin',
    pathParams: addressParam,
    query: usageQuerySchema,
    response: { description: 'A page of records, or totals', content: json(z.union([usageListSchema, usageTotalsSchema])) },
    errors: [400],
  },
];
