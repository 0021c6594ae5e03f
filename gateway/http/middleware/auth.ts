/**
 * Who may call: after the wallet header is checked, `authenticate` checks the API key, sent as
 * `Authorization: Bearer <key>` or `x-api-key: <key>` (the header Anthropic's clients send).
 *
 * | route kind            | free mode off                 | free mode on                          |
 * |-----------------------|-------------------------------|---------------------------------------|
 * | `keyRequired: 'always'`       | a key of that wallet  | a key of that wallet                  |
 * | `keyRequired: 'unless-free'`  | a verified key of that wallet | nothing; a key, if sent, is still checked |
 *
 * In free mode a value not shaped like a Switchyard key (no `sy_` prefix) is ignored, as if absent:
 * the `openai` SDK, LangChain and the AI SDK always send some key, and a placeholder must not turn a
 * free gateway away. A value shaped like a key is checked, so a mistyped real key is still caught.
 *
 * Refusals: no key → 401 missing_api_key; unknown/revoked/malformed → 401 invalid_api_key; both
 * headers with different values → 401 ambiguous_api_key; a key of another wallet → 403
 * wallet_mismatch; a key minted without proof (free mode) while free mode is off → 401
 * unverified_api_key. Messages never echo the key.
 *
 * A key whose expires_at has passed → 401 api_key_expired (free mode enforces no limits: anyone
 * may omit the key there).
 *
 * Sets `ctx.state.apiKey = {id, verified, limits?}` when a key was checked (`limits` only with
 * credits on, for http/key-scope.ts). Whether credits are charged is not
 * auth's business: `createApp` picks the charger once (ledger/charging.ts).
 *
 * @example
 *   router.get('/credits/balance', compose([requireWallet(), authenticate(apiKeys, { freeMode, keyRequired: 'unless-free', logger })]), handler)
 */
import type { Context, Next } from 'koa';
import { ApiKeyExpired, Forbidden, Unauthorized } from '../../errors.js';
import type { ApiKeys } from '../../keys/api-keys.js';
import { isExpired, type KeyLimits } from '../../ledger/key-budgets.js';
import { KEY_PREFIX } from '../../keys/api-keys.js';
import type { Logger } from '../../logger.js';
import { admitted } from './admission.js';

export interface AuthOptions {
  freeMode: boolean;
  keyRequired: 'always' | 'unless-free';
  /** Says (at debug) when free mode ignores a value that is no Switchyard key. */
  logger: Logger;
}

export function authenticate(apiKeys: ApiKeys<KeyLimits>, options: AuthOptions) {
  // Not `async` itself: in free mode most requests carry no key and go straight on, without a
  // promise of this layer's own.
  return function apiKey(ctx: Context, next: Next): Promise<void> {
    let key = presentedKey(ctx);
    if (key !== undefined && options.freeMode && !key.startsWith(KEY_PREFIX)) {
      options.logger.debug({ requestId: ctx.state.requestId }, 'free mode: ignoring an API key value not shaped like a Switchyard key');
      key = undefined;
    }
    if (key === undefined) {
      if (options.freeMode && options.keyRequired === 'unless-free') return next();
      throw new Unauthorized(
        'missing_api_key',
        'An API key is required: send Authorization: Bearer <key> or x-api-key: <key> (create one with POST /auth/api-keys).',
      );
    }
    return checkKey(apiKeys, options, ctx, key, next);
  };
}

/**
 * The key value the request presents, or undefined. An `Authorization` header that is not
 * `Bearer <token>` presents itself whole (so it is refused as invalid, not ignored as absent).
 */
function presentedKey(ctx: Context): string | undefined {
  const authorization = ctx.get('authorization').trim();
  const bearer = authorization ? (/^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? authorization) : undefined;
  const header = ctx.get('x-api-key').trim() || undefined;
  if (bearer !== undefined && header !== undefined && bearer !== header) {
    throw new Unauthorized('ambiguous_api_key', 'Authorization and x-api-key carry different keys: send one key, in either header.');
  }
  return bearer ?? header;
}

/** A key was sent: it must be a known key of this wallet (verified unless free mode). */
async function checkKey(apiKeys: ApiKeys<KeyLimits>, options: AuthOptions, ctx: Context, key: string, next: Next): Promise<void> {
  let record = apiKeys.findInMemory(key);
  if (!record) {
    // A store read waits for the request's budgets (http/middleware/admission.ts): a flood of unknown keys
    // stops at the IP's budget before it reaches the store.
    await admitted(ctx);
    record = await apiKeys.find(key);
  }
  if (!record) throw new Unauthorized('invalid_api_key', 'The API key is not valid: it is unknown, malformed or revoked.');
  if (record.address !== ctx.state.wallet) {
    throw new Forbidden('wallet_mismatch', 'This API key belongs to another wallet than x-wallet-address.');
  }
  if (!record.verified && !options.freeMode) {
    throw new Unauthorized(
      'unverified_api_key',
      'This API key was created in free mode without a wallet-ownership proof; create a new key with a SIWE proof.',
    );
  }
  const limits = options.freeMode ? undefined : record.limits;
  if (limits && isExpired(limits, Date.now())) throw new ApiKeyExpired();
  ctx.state.apiKey = limits ? { id: record.id, verified: record.verified, limits } : { id: record.id, verified: record.verified };
  apiKeys.touch(key, record);
  await next();
}
