import type { Context, Next } from 'koa';
import '../state.js';
import { GatewayError } from '../../errors.js';
import { parseWalletAddress } from '../../wallet-address.js';

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

/** The wallet `requireWallet` put on the request; only routes behind it may ask. */
export function callerWallet(ctx: Context): string {
  const wallet = ctx.state.wallet;
  if (wallet === undefined) throw new Error(`${ctx.method} ${ctx.path} reads the wallet without requireWallet`);
  return wallet;
}
