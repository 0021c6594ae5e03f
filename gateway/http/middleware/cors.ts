import cors from '@koa/cors';
import type { Context, Middleware } from 'koa';

/**
 * Headers a browser client may send: its key (either header), JSON, its wallet, its own request id,
 * the protocol version an MCP client sends on every POST to /mcp after initialize, and the two
 * headers Anthropic's clients send on /v1/messages (accepted and ignored there).
 */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'x-api-key',
  'content-type',
  'x-wallet-address',
  'x-request-id',
  'mcp-protocol-version',
  'anthropic-version',
  'anthropic-beta',
];
/** Response headers a browser client may read (ids, rate limits and credit accounting). */
export const CORS_EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'x-credits-charged',
  'x-credits-remaining',
  'payment-required',
  'payment-response',
];

/**
 * CORS for the origins in `CORS_ORIGINS` (`*` allows any). With no origins configured there is no
 * CORS at all: no headers, and preflights fall through to the router like any OPTIONS request.
 * Preflights from allowed origins are answered here, before rate limits and auth.
 *
 * @example
 *   app.use(corsFor(['https://app.example']))
 */
export function corsFor(origins: readonly string[]): Middleware | undefined {
  if (origins.length === 0) return undefined;
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  return cors({
    // Echo the caller's origin only when it is allowed; '' means "not a CORS request for us".
    origin: (ctx: Context) => {
      const origin = ctx.get('origin');
      if (anyOrigin) return '*';
      return allowed.has(origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
    allowHeaders: CORS_ALLOWED_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
}
