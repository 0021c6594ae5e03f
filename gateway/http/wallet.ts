import type { Context, Next } from 'koa';
import { isAddress } from 'viem';
import { GatewayError } from '../errors.js';

/**
 * Parse an `x-wallet-address` value: `0x` + 40 hex; mixed case must pass the EIP-55 checksum.
 * All-lower and all-upper hex carry no checksum (EIP-55 says so), so both are accepted as they are.
 * Returns the canonical lower-case form, or undefined when the value is not acceptable.
 *
 * @example
 *   parseWalletAddress('0x52908400098527886E0F7030069857D2E4169EE7') // '0x5290…9ee7'
 */
export function parseWalletAddress(value: string | undefined): string | undefined {
  if (!value || !/^0x[0-9a-fA-F]{40}$/.test(value)) return undefined;
  const hex = value.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return value.toLowerCase();
  return isAddress(value, { strict: true }) ? value.toLowerCase() : undefined;
}

/**
 * Require a valid wallet header and put its canonical form on `ctx.state.wallet`. Not `async`:
 * it only checks and hands on, and every middleware layer's own promise costs on each request.
 */
export function requireWallet() {
  return function walletHeader(ctx: Context, next: Next): Promise<void> {
    const raw = ctx.get('x-wallet-address');
    const wallet = parseWalletAddress(raw || undefined);
    if (!wallet) {
      throw new GatewayError({
        status: 400,
        code: 'invalid_wallet_address',
        param: 'x-wallet-address',
        message: raw
          ? 'x-wallet-address must be 0x followed by 40 hex characters; mixed case must be a valid EIP-55 checksum.'
          : 'The x-wallet-address header is required.',
      });
    }
    ctx.state.wallet = wallet;
    return next();
  };
}
