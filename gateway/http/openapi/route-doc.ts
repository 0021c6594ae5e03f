/**
 * What a route group says about its routes for `/openapi.json`. Each group exports its
 * `RouteDoc[]` beside its `register…Routes`, built from the zod schemas its handlers validate
 * with, so a new route brings its entry in its own file (and the coverage test fails without it).
 *
 * @example
 *   export const creditRouteDocs: RouteDoc[] = [{ method: 'get', path: '/credits/balance', tag: 'Credits',
 *     summary: 'Credit balance', access: 'gated', response: { description: 'The balance', content: json(balanceSchema) } }]
 */
import { z } from 'zod';

/**
 * Who may call a route (see http/middleware/auth.ts): nobody in particular, the wallet header alone, the
 * wallet header plus a key unless free mode is on (`gated`), the wallet header plus a key in every
 * mode, the admin token, or the admin token only when one is configured (`/metrics`).
 */
export type RouteAccess = 'open' | 'wallet' | 'gated' | 'key-of-wallet' | 'admin' | 'admin-if-set';

/** Response bodies by media type; `undefined` for a body the schema cannot describe (bytes, text). */
export type MediaContent = Record<string, z.ZodType | undefined>;

export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The Koa path as registered, e.g. `/auth/api-keys/:id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  access: RouteAccess;
  pathParams?: z.ZodObject;
  /** The query string, as the handler validates it. */
  query?: z.ZodObject;
  /** Request headers beyond the wallet and key, which the security schemes describe. */
  headers?: z.ZodObject;
  body?: z.ZodType;
  response: {
    description: string;
    content: MediaContent;
    /** Response headers beyond `x-request-id` (which every answer carries): name → description. */
    headers?: Record<string, string>;
  };
  /** Error statuses the handler itself answers, beyond those its access and body reading bring. */
  errors?: number[];
  /** Headers some error answers carry (e.g. the x402 offer on a 402): status → name → description. */
  errorHeaders?: Record<number, Record<string, string>>;
  /**
   * The error body, when the route shapes it differently (`/v1/tools/execute` adds `ok` and `tool`); the
   * HTTP server's own refusals and the per-IP 429, which come before any route, keep the plain one.
   */
  errorBody?: z.ZodType;
  /** Every body single statuses may have, where it differs from the above (`/mcp`'s JSON-RPC errors from the MCP transport). */
  errorBodies?: Record<number, z.ZodType>;
}

/** A JSON response or request body. */
export function json(schema: z.ZodType): MediaContent {
  return { 'application/json': schema };
}

export const errorObjectSchema = z.object({
  message: z.string(),
  type: z.string().meta({ examples: ['invalid_request_error', 'authentication_error', 'insufficient_credits_error'] }),
  code: z.string().meta({ examples: ['invalid_wallet_address', 'missing_api_key', 'insufficient_credits', 'rate_limited'] }),
  param: z.string().nullable(),
});

/** Every error answer: the OpenAI shape. */
export const errorBodySchema = z.object({ error: errorObjectSchema });

/** The balance a wallet's credit routes answer with (integers). */
export const balanceSchema = z.object({
  address: z.string().meta({ description: 'The wallet, lower-case' }),
  credits: z.number().int().nonnegative().meta({ description: 'What can be spent now' }),
  total_deposited: z.number().int().nonnegative(),
  total_spent: z.number().int().nonnegative(),
});
