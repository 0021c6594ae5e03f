/**
 * An API key's limits on the wire, shared by the key routes (minting, PATCH with a SIWE proof,
 * the listing) and the operator's PATCH /admin/api-keys/:id: the request fields (zod), their
 * check against what exists (tool names, `server:*` of a configured server or `gateway`, models
 * resolved from ids or aliases to canonical ids), the listing's shape, and the one way limits
 * change (the ledger first, then every instance's key cache drops the key, as a revocation).
 *
 * @example
 *   const limits = limitsFromBody(parsed, NO_KEY_LIMITS, known)     // 400 naming the field when a tool or model is unknown
 *   await changeKeyLimits({ ledger, apiKeys }, wallet, id, limits)
 */
import { z } from 'zod';
import { InvalidRequest, NotFound, echoed } from '../errors.js';
import type { ApiKeyListing, ApiKeys } from '../keys/api-keys.js';
import { NO_KEY_LIMITS, type KeyLimits, type KeyUsage } from '../ledger/key-budgets.js';
import { MAX_GRANT } from '../ledger/ledger-amounts.js';
import type { Ledger } from '../ledger/ledger.js';

const credits = z.number().int('must be a whole number').nonnegative('must not be negative').max(MAX_GRANT, `at most ${MAX_GRANT}`);

/** The limit fields of a request body; absent: unchanged (or none, when minting); null: removed. */
export const limitFields = {
  max_credits: credits.nullable().optional().meta({ description: 'Credits the key may spend in its lifetime' }),
  max_credits_per_day: credits
    .nullable()
    .optional()
    .meta({ description: 'Credits the key may spend per UTC day (the day of each charge)' }),
  expires_at: z.iso
    .datetime({ offset: true })
    .nullable()
    .optional()
    .meta({ description: 'ISO-8601; the key is refused (401 api_key_expired) from then on' }),
  tools: z
    .array(z.string().min(1).max(200))
    .max(200)
    .nullable()
    .optional()
    .meta({ description: 'Tool names, or `server:*` for every tool of an mcpServers entry (`list_tools` is server `gateway`)' }),
  models: z
    .array(z.string().min(1).max(200))
    .max(100)
    .nullable()
    .optional()
    .meta({ description: 'Model ids or aliases (kept as canonical ids); the default model applies when a request names none' }),
};

export type LimitFields = { [K in keyof typeof limitFields]?: z.infer<(typeof limitFields)[K]> };

/** What a key's limits may name: the tools and servers there are, and the models (id or alias → canonical id). */
export interface KnownNames {
  hasTool(name: string): boolean;
  servers: string[];
  modelId(name: string): string | undefined;
}

/** `base` with the fields the body sets; 400 invalid_request naming the field when something it names does not exist. */
export function limitsFromBody(body: LimitFields, base: KeyLimits, known: KnownNames, now = Date.now()): KeyLimits {
  const limits = { ...base };
  if (body.max_credits !== undefined) limits.maxCredits = body.max_credits;
  if (body.max_credits_per_day !== undefined) limits.maxCreditsPerDay = body.max_credits_per_day;
  if (body.expires_at !== undefined) {
    limits.expiresAt = body.expires_at === null ? null : Date.parse(body.expires_at);
    if (limits.expiresAt !== null && limits.expiresAt <= now) throw new InvalidRequest('expires_at must be in the future.', 'expires_at');
  }
  if (body.tools !== undefined) {
    for (const pattern of body.tools ?? []) {
      const server = pattern.endsWith(':*') ? pattern.slice(0, -2) : undefined;
      const exists = server !== undefined ? server === 'gateway' || known.servers.includes(server) : known.hasTool(pattern);
      if (!exists) throw new InvalidRequest(`tools: no tool or server "${echoed(pattern)}" (see GET /v1/tools).`, 'tools');
    }
    limits.tools = body.tools === null ? null : [...new Set(body.tools)];
  }
  if (body.models !== undefined) {
    limits.models =
      body.models === null
        ? null
        : [
            ...new Set(
              body.models.map((name) => {
                const id = known.modelId(name);
                if (id === undefined) throw new InvalidRequest(`models: no model "${echoed(name)}" (see GET /v1/models).`, 'models');
                return id;
              }),
            ),
          ];
  }
  return limits;
}

/** Whether the body sets any limit. */
export function setsLimits(body: LimitFields): boolean {
  return Object.keys(limitFields).some((field) => body[field as keyof LimitFields] !== undefined);
}

/** A key's limits as the listing shows them. */
export function limitsOnWire(limits: KeyLimits) {
  return {
    max_credits: limits.maxCredits,
    max_credits_per_day: limits.maxCreditsPerDay,
    expires_at: limits.expiresAt === null ? null : new Date(limits.expiresAt).toISOString(),
    tools: limits.tools,
    models: limits.models,
  };
}

/** A key as GET /auth/api-keys lists it: its record, its limits and its spend (null: no limits row, spend not counted). */
export function keyOnWire(listing: ApiKeyListing, usage: KeyUsage | undefined) {
  return {
    ...listing,
    limits: usage ? limitsOnWire(usage.limits) : null,
    spend: usage ? { lifetime: usage.spent, today: usage.spentToday } : null,
  };
}

export const keyLimitsSchema = z
  .object({
    max_credits: z.number().int().nullable(),
    max_credits_per_day: z.number().int().nullable(),
    expires_at: z.string().nullable().meta({ description: 'ISO-8601' }),
    tools: z.array(z.string()).nullable(),
    models: z.array(z.string()).nullable().meta({ description: 'Canonical model ids' }),
  })
  .nullable()
  .meta({ description: 'Null: the key has no limits' });

export const keySpendSchema = z
  .object({
    lifetime: z.number().int().meta({ description: 'Credits charged to the key since it got limits' }),
    today: z.number().int().meta({ description: 'Credits charged to it this UTC day' }),
  })
  .nullable()
  .meta({ description: 'Null: spend is counted only for keys with limits' });

export const keyListingSchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().meta({ description: 'The first characters of the key' }),
  created_at: z.number().int().meta({ description: 'Unix seconds' }),
  last_used_at: z.number().int().nullable().meta({ description: 'Unix seconds, written at most once a minute' }),
  verified: z.boolean(),
  limits: keyLimitsSchema,
  spend: keySpendSchema,
});

/**
 * Store the wallet's key `id`'s new limits in the ledger (spend counters kept), then have every
 * key cache drop the key; 404 api_key_not_found when the wallet has no such key.
 */
export async function changeKeyLimits(
  deps: { ledger: Ledger; apiKeys: ApiKeys<KeyLimits> },
  wallet: string,
  id: string,
  body: LimitFields,
  known: KnownNames,
): Promise<ReturnType<typeof keyOnWire>> {
  const listing = await deps.apiKeys.byId(wallet, id);
  if (!listing) throw new NotFound(`This wallet has no API key "${echoed(id)}".`, 'api_key_not_found', 'id');
  const current = (await deps.ledger.keyUsage([id])).get(id)?.limits ?? NO_KEY_LIMITS;
  const limits = limitsFromBody(body, current, known);
  await deps.ledger.setKeyLimits({ keyId: id, wallet, limits });
  await deps.apiKeys.limitsChanged(wallet, id);
  return keyOnWire(listing, (await deps.ledger.keyUsage([id])).get(id));
}
