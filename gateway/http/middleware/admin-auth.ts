import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { GatewayError } from '../../errors.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Guard for operator endpoints: `Authorization: Bearer <ADMIN_TOKEN>`, compared as SHA-256
 * digests in constant time (equal lengths, so timing says nothing about the token).
 * `whenUnset`: 'open' lets requests through when no token is configured (metrics);
 * 'disabled' answers 404 (admin endpoints do not exist without a token).
 */
export function requireAdmin(adminToken: string | undefined, whenUnset: 'open' | 'disabled') {
  const expected = adminToken === undefined ? undefined : digest(adminToken);
  return async function adminAuth(ctx: Context, next: Next): Promise<void> {
    if (!expected) {
      if (whenUnset === 'open') return next();
      throw new GatewayError({ status: 404, code: 'not_found', message: 'Admin endpoints are disabled: ADMIN_TOKEN is not set.' });
    }
    const match = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
    if (!match || !timingSafeEqual(digest(match[1].trim()), expected)) {
      throw new GatewayError({ status: 401, code: 'invalid_admin_token', message: 'A valid admin Bearer token is required.' });
    }
    await next();
  };
}
