/**
 * Who may call: after the wallet header is checked, `authenticate` checks the Bearer key.
 *
 * | route kind            | free mode off                 | free mode on                          |
 * |-----------------------|-------------------------------|---------------------------------------|
 * | `keyRequired: 'always'`       | a key of that wallet  | a key of that wallet                  |
 * | `keyRequired: 'unless-free'`  | a verified key of that wallet | nothing; a key, if sent, is still checked |
 *
 * Refusals: no key → 401 missing_api_key; unknown/revoked/malformed → 401 invalid_api_key; a key
 * of another wallet → 403 wallet_mismatch; a key minted without proof (free mode) while free
 * mode is off → 401 unverified_api_key. Messages never echo the key.
 *
 * Sets `ctx.state.apiKey = {id, verified}` when a key was sent. Whether credits are charged is not
 * auth's business: `createApp` picks the charger once (accounts/charging.ts).
 *
 * @example
 *   router.get('/credits/balance', compose([requireWallet(), authenticate(apiKeys, { freeMode, keyRequired: 'unless-free' })]), handler)
 */
import type { Context, Next } from 'koa';
import { Forbidden, Unauthorized } from '../../errors.js';
import type { ApiKeys } from '../../accounts/api-keys.js';
import { admitted } from './admission.js';

export interface AuthOptions {
  freeMode: boolean;
  keyRequired: 'always' | 'unless-free';
}

export function authenticate(apiKeys: ApiKeys, options: AuthOptions) {
  // Not `async` itself: in free mode most requests carry no key and go straight on, without a
  // promise of this layer's own.
  return function bearerKey(ctx: Context, next: Next): Promise<void> {
    const header = ctx.get('authorization').trim();
    if (!header) {
      if (options.freeMode && options.keyRequired === 'unless-free') return next();
      throw new Unauthorized(
        'missing_api_key',
        'An API key is required: send Authorization: Bearer <key> (create one with POST /auth/api-keys).',
      );
    }
    return checkKey(apiKeys, options, ctx, header, next);
  };
}

/** A Bearer key was sent: it must be a known key of this wallet (verified unless free mode). */
async function checkKey(apiKeys: ApiKeys, options: AuthOptions, ctx: Context, header: string, next: Next): Promise<void> {
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  const key = match?.[1];
  let record = key === undefined ? undefined : apiKeys.findInMemory(key);
  if (key !== undefined && !record) {
    // A store read waits for the request's budgets (http/middleware/admission.ts): a flood of unknown keys
    // stops at the IP's budget before it reaches the store.
    await admitted(ctx);
    record = await apiKeys.find(key);
  }
  if (!key || !record) throw new Unauthorized('invalid_api_key', 'The API key is not valid: it is unknown, malformed or revoked.');
  if (record.address !== ctx.state.wallet) {
    throw new Forbidden('wallet_mismatch', 'This API key belongs to another wallet than x-wallet-address.');
  }
  if (!record.verified && !options.freeMode) {
    throw new Unauthorized(
      'unverified_api_key',
      'This API key was created in free mode without a wallet-ownership proof; create a new key with a SIWE proof.',
    );
  }
  ctx.state.apiKey = { id: record.id, verified: record.verified };
  apiKeys.touch(key, record);
  await next();
}
