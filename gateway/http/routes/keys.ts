/**
 * Key routes: `GET /auth/nonce` (a SIWE nonce), `POST /auth/api-keys` (mint a key: with a SIWE
 * proof, or the wallet header alone in free mode), `GET /auth/api-keys` (the caller's keys) and
 * `DELETE /auth/api-keys/:id` (revoke).
 *
 * @example
 *   registerKeyRoutes(router, { accounts, freeMode: config.freeMode, walletOnly: requireWallet(), keyOfWallet })
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { echoed, invalidRequestFrom, InvalidRequest, NotFound, Unauthorized } from '../../errors.js';
import type { ApiKeys } from '../../keys/api-keys.js';
import type { SiweVerifier } from '../../keys/siwe.js';
import { callerWallet } from '../middleware/wallet.js';
import { json, type RouteDoc } from '../openapi/route-doc.js';

const createKeySchema = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(64, 'at most 64 characters').default('default'),
    message: z.string().min(1).max(4_096).optional(),
    signature: z.string().min(1).max(4_096).optional(),
  })
  .strict();

const KEY_SHOWN_ONCE = 'Store this key now: it is shown only once and cannot be retrieved later.';

export function registerKeyRoutes(
  router: Router,
  deps: {
    accounts: { apiKeys: ApiKeys; siwe: SiweVerifier };
    freeMode: boolean;
    /** The wallet header check. */
    walletOnly: Middleware;
    /** The wallet header plus a key of that wallet (in every mode). */
    keyOfWallet: Middleware;
  },
): void {
  const { apiKeys, siwe } = deps.accounts;

  router.get('/auth/nonce', deps.walletOnly, async (ctx) => {
    ctx.body = await siwe.issueNonce(callerWallet(ctx));
  });

  router.post('/auth/api-keys', deps.walletOnly, async (ctx) => {
    const wallet = callerWallet(ctx);
    const parsed = createKeySchema.safeParse(ctx.request.body ?? {});
    if (!parsed.success) throw invalidRequestFrom(parsed.error, { unnamed: 'Request body: ' });
    const { name, message, signature } = parsed.data;
    const proofSent = message !== undefined || signature !== undefined;
    if (proofSent && (message === undefined || signature === undefined)) {
      throw new InvalidRequest('A SIWE proof needs both message and signature.', message === undefined ? 'message' : 'signature');
    }
    if (!proofSent && !deps.freeMode) {
      throw new Unauthorized(
        'siwe_proof_required',
        'Creating a key needs a wallet-ownership proof: sign a SIWE message with a nonce from GET /auth/nonce and send {message, signature}.',
      );
    }
    // In free mode a proof is optional, but one that is sent is still checked: a verified key
    // keeps working when free mode is switched off.
    if (proofSent) await siwe.verify(wallet, { message: message as string, signature: signature as string });
    const { key, record } = await apiKeys.create({ address: wallet, name, verified: proofSent });
    ctx.body = { key, id: record.id, name: record.name, address: record.address, verified: record.verified, message: KEY_SHOWN_ONCE };
  });

  router.get('/auth/api-keys', deps.keyOfWallet, async (ctx) => {
    ctx.body = { object: 'list', data: await apiKeys.list(callerWallet(ctx)) };
  });

  router.delete('/auth/api-keys/:id', deps.keyOfWallet, async (ctx) => {
    const id = ctx.params.id;
    if (!(await apiKeys.revoke(callerWallet(ctx), id))) {
      throw new NotFound(`This wallet has no API key "${echoed(id)}".`, 'api_key_not_found', 'id');
    }
    ctx.body = { id, revoked: true };
  });
}

const nonceSchema = z.object({
  nonce: z.string(),
  domain: z.string().meta({ description: 'The SIWE domain: the host of PUBLIC_URL' }),
  uri: z.string().meta({ description: 'The SIWE uri: the origin of PUBLIC_URL' }),
  expires_at: z.string().meta({ description: 'ISO-8601' }),
});

const createdKeySchema = z.object({
  key: z.string().meta({ description: '`sy_` + 43 base64url characters, shown only here' }),
  id: z.string(),
  name: z.string(),
  address: z.string(),
  verified: z.boolean().meta({ description: 'Minted with a SIWE proof (keeps working outside free mode)' }),
  message: z.string(),
});

const keyListSchema = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      prefix: z.string().meta({ description: 'The first characters of the key' }),
      created_at: z.number().int().meta({ description: 'Unix seconds' }),
      last_used_at: z.number().int().nullable(),
      verified: z.boolean(),
    }),
  ),
});

export const keyRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/auth/nonce',
    tag: 'Keys',
    summary: 'A single-use SIWE nonce for the wallet',
    access: 'wallet',
    response: { description: 'The nonce and the domain and uri the SIWE message must name', content: json(nonceSchema) },
  },
  {
    method: 'post',
    path: '/auth/api-keys',
    tag: 'Keys',
    summary: 'Create an API key',
    description: 'Needs a SIWE proof (`message`, `signature`) unless free mode is on; a proof that is sent is always checked.',
    access: 'wallet',
    body: createKeySchema,
    response: { description: 'The key, shown once', content: json(createdKeySchema) },
    errors: [401, 409, 502],
  },
  {
    method: 'get',
    path: '/auth/api-keys',
    tag: 'Keys',
    summary: "The wallet's keys",
    access: 'key-of-wallet',
    response: { description: 'Oldest first; never the key or its hash', content: json(keyListSchema) },
  },
  {
    method: 'delete',
    path: '/auth/api-keys/:id',
    tag: 'Keys',
    summary: 'Revoke a key',
    access: 'key-of-wallet',
    pathParams: z.object({ id: z.string() }),
    response: { description: 'Revoked at once', content: json(z.object({ id: z.string(), revoked: z.literal(true) })) },
    errors: [404],
  },
];
