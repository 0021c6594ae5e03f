/**
 * Key routes: `GET /auth/nonce` (a SIWE nonce), `POST /auth/api-keys` (mint a key: with a SIWE
 * proof, or the wallet header alone in free mode; optionally with limits), `GET /auth/api-keys`
 * (the caller's keys with their limits and spend), `PATCH /auth/api-keys/:id` (change a key's
 * limits: a fresh SIWE proof in the body) and `DELETE /auth/api-keys/:id` (revoke).
 *
 * A key that carries limits may not manage keys (403 key_not_allowed on PATCH and DELETE), and
 * lists only itself: a key handed to an agent cannot raise its own cap or revoke the owner's keys.
 *
 * @example
 *   registerKeyRoutes(router, { accounts, freeMode: config.freeMode, walletOnly: requireWallet(), keyOfWallet })
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { Context } from 'koa';
import { echoed, invalidRequestFrom, InvalidRequest, NotFound, Unauthorized } from '../../errors.js';
import type { ApiKeys } from '../../keys/api-keys.js';
import type { SiweVerifier } from '../../keys/siwe.js';
import { NO_KEY_LIMITS, type KeyLimits } from '../../ledger/key-budgets.js';
import type { Ledger } from '../../ledger/ledger.js';
import { assertKeyMayManageKeys, keyLimitsOf } from '../key-scope.js';
import {
  changeKeyLimits,
  keyLimitsSchema,
  keyListingSchema,
  keyOnWire,
  limitFields,
  limitsFromBody,
  limitsOnWire,
  setsLimits,
  type KnownNames,
} from '../key-limits-body.js';
import { callerWallet } from '../middleware/wallet.js';
import { json, type RouteDoc } from '../openapi/route-doc.js';

const createKeySchema = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(64, 'at most 64 characters').default('default'),
    message: z.string().min(1).max(4_096).optional(),
    signature: z.string().min(1).max(4_096).optional(),
    ...limitFields,
  })
  .strict();

const patchKeySchema = z
  .object({
    message: z.string().min(1).max(4_096).optional(),
    signature: z.string().min(1).max(4_096).optional(),
    ...limitFields,
  })
  .strict();

const KEY_SHOWN_ONCE = 'Store this key now: it is shown only once and cannot be retrieved later.';

export function registerKeyRoutes(
  router: Router,
  deps: {
    accounts: { apiKeys: ApiKeys<KeyLimits>; siwe: SiweVerifier; ledger: Ledger };
    /** What key limits may name. */
    known: KnownNames;
    freeMode: boolean;
    /** The wallet header check. */
    walletOnly: Middleware;
    /** The wallet header plus a key of that wallet (in every mode). */
    keyOfWallet: Middleware;
  },
): void {
  const { apiKeys, siwe, ledger } = deps.accounts;

  /** A SIWE proof of the body: required unless free mode; one that is sent is always checked. */
  async function checkProof(ctx: Context, message: string | undefined, signature: string | undefined, what: string): Promise<boolean> {
    const proofSent = message !== undefined || signature !== undefined;
    if (proofSent && (message === undefined || signature === undefined)) {
      throw new InvalidRequest('A SIWE proof needs both message and signature.', message === undefined ? 'message' : 'signature');
    }
    if (!proofSent && !deps.freeMode) {
      throw new Unauthorized(
        'siwe_proof_required',
        `${what} needs a wallet-ownership proof: sign a SIWE message with a nonce from GET /auth/nonce and send {message, signature}.`,
      );
    }
    if (proofSent) await siwe.verify(callerWallet(ctx), { message: message as string, signature: signature as string });
    return proofSent;
  }

  router.get('/auth/nonce', deps.walletOnly, async (ctx) => {
    ctx.body = await siwe.issueNonce(callerWallet(ctx));
  });

  router.post('/auth/api-keys', deps.walletOnly, async (ctx) => {
    const wallet = callerWallet(ctx);
    const parsed = createKeySchema.safeParse(ctx.request.body ?? {});
    if (!parsed.success) throw invalidRequestFrom(parsed.error, { unnamed: 'Request body: ' });
    const { name, message, signature, ...fields } = parsed.data;
    // Checked before the proof is spent: a mistyped tool name does not cost a nonce.
    const limits = setsLimits(fields) ? limitsFromBody(fields, NO_KEY_LIMITS, deps.known) : undefined;
    // In free mode a proof is optional, but one that is sent is still checked: a verified key
    // keeps working when free mode is switched off.
    const proofSent = await checkProof(ctx, message, signature, 'Creating a key');
    const { key, record } = await apiKeys.create({
      address: wallet,
      name,
      verified: proofSent,
      // The limits reach the ledger before the key exists, so it never works without them.
      prepare: limits ? (minted) => ledger.setKeyLimits({ keyId: minted.id, wallet, limits }) : undefined,
    });
    ctx.body = {
      key,
      id: record.id,
      name: record.name,
      address: record.address,
      verified: record.verified,
      limits: limits ? limitsOnWire(limits) : null,
      message: KEY_SHOWN_ONCE,
    };
  });

  router.get('/auth/api-keys', deps.keyOfWallet, async (ctx) => {
    const all = await apiKeys.list(callerWallet(ctx));
    // A key with limits sees only itself.
    const listed = keyLimitsOf(ctx) ? all.filter((listing) => listing.id === ctx.state.apiKey?.id) : all;
    const usage = await ledger.keyUsage(listed.map((listing) => listing.id));
    ctx.body = { object: 'list', data: listed.map((listing) => keyOnWire(listing, usage.get(listing.id))) };
  });

  router.patch('/auth/api-keys/:id', deps.keyOfWallet, async (ctx) => {
    assertKeyMayManageKeys(ctx);
    const parsed = patchKeySchema.safeParse(ctx.request.body ?? {});
    if (!parsed.success) throw invalidRequestFrom(parsed.error, { unnamed: 'Request body: ' });
    const { message, signature, ...fields } = parsed.data;
    // Checked before the proof is spent, as when minting.
    limitsFromBody(fields, NO_KEY_LIMITS, deps.known);
    await checkProof(ctx, message, signature, 'Changing a key');
    ctx.body = await changeKeyLimits({ ledger, apiKeys }, callerWallet(ctx), ctx.params.id, fields, deps.known);
  });

  router.delete('/auth/api-keys/:id', deps.keyOfWallet, async (ctx) => {
    assertKeyMayManageKeys(ctx);
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
  limits: keyLimitsSchema,
  message: z.string(),
});

const keyListSchema = z.object({
  object: z.literal('list'),
  data: z.array(keyListingSchema),
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
    description:
      'Needs a SIWE proof (`message`, `signature`) unless free mode is on; a proof that is sent is always checked. ' +
      'Optional limits: `max_credits`, `max_credits_per_day` (UTC day), `expires_at`, `tools`, `models`. Over a budget a request ' +
      'is 402 key_budget_exhausted (no x402 offer: the wallet may still hold credits), past expires_at 401 api_key_expired, ' +
      'outside its tools or models 403 tool_not_allowed / model_not_allowed. A key with limits may not change or revoke keys ' +
      'and lists only itself. Free mode enforces no limits.',
    access: 'wallet',
    body: createKeySchema,
    response: { description: 'The key, shown once', content: json(createdKeySchema) },
    errors: [400, 401, 409, 502],
  },
  {
    method: 'get',
    path: '/auth/api-keys',
    tag: 'Keys',
    summary: "The wallet's keys",
    description: 'With a key that carries limits: only that key.',
    access: 'key-of-wallet',
    response: { description: 'Oldest first, with limits and spend; never the key or its hash', content: json(keyListSchema) },
  },
  {
    method: 'patch',
    path: '/auth/api-keys/:id',
    tag: 'Keys',
    summary: "Change a key's limits",
    description:
      'Needs a fresh SIWE proof (`message`, `signature`, nonce from GET /auth/nonce) unless free mode is on. A field left out is ' +
      'unchanged, null removes the limit; spend counters are kept. Reaches every instance within 1 s with Redis (30 s without). ' +
      'A key carrying limits is refused (403 key_not_allowed).',
    access: 'key-of-wallet',
    pathParams: z.object({ id: z.string() }),
    body: patchKeySchema,
    response: { description: 'The key as listed', content: json(keyListingSchema) },
    errors: [400, 403, 404, 502],
  },
  {
    method: 'delete',
    path: '/auth/api-keys/:id',
    tag: 'Keys',
    summary: 'Revoke a key',
    access: 'key-of-wallet',
    pathParams: z.object({ id: z.string() }),
    description: 'A key carrying limits is refused (403 key_not_allowed).',
    response: { description: 'Revoked at once', content: json(z.object({ id: z.string(), revoked: z.literal(true) })) },
    errors: [403, 404],
  },
];
