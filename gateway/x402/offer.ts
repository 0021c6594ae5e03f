/**
 * What the gateway offers on a 402 and whether a payment is one of those offers. An offer lists,
 * per accepted stablecoin, the configured top-ups (in credits, priced in the token's atomic
 * units), the smallest raised to cover the refused hold, as x402 v2 PaymentRequirements with
 * scheme `exact` (specs/schemes/exact/scheme_exact_evm.md: `extra` carries the token's EIP-712
 * name and version, which the client signs with). A payment must match an offer in everything
 * but which top-up it picked, and be signed by the caller's own wallet.
 *
 * @example
 *   const offers = new X402Offers(config.x402)
 *   offers.paymentRequired('https://gw/v1/chat/completions', 3)   // accepts: [{ amount: '10000000', … }]
 *   offers.match(payload, wallet, nowSeconds)                       // { asset, requirements, credits } or { reason, message }
 */
import type { X402Asset, X402Config } from '../config.js';
import { X402_VERSION, type PaymentPayload, type PaymentRequired, type PaymentRequirements } from './wire.js';
import { echoed } from '../errors.js';

/** The exact scheme's facilitators refuse an authorization about to expire (validBefore within 6 s). */
const MIN_VALIDITY_LEFT_S = 6;
/** Allowed clock difference between a client and this gateway, in seconds. */
const CLOCK_SKEW_S = 60;

export type OfferMatch =
  { asset: X402Asset; requirements: PaymentRequirements; credits: bigint } | { reason: string; message: string; asset?: undefined };

export class X402Offers {
  constructor(private readonly config: X402Config) {}

  /** The PAYMENT-REQUIRED content for a request `shortfall` credits short (0: any top-up). */
  paymentRequired(resourceUrl: string, shortfall: number, error?: string): PaymentRequired {
    const accepts = this.offeredCredits(shortfall).flatMap((credits) =>
      this.config.assets.map((asset) => this.requirements(asset, BigInt(credits) * BigInt(asset.unitsPerCredit))),
    );
    return {
      x402Version: X402_VERSION,
      ...(error ? { error } : {}),
      resource: { url: resourceUrl, description: 'A prepaid credit top-up for this wallet', mimeType: 'application/json' },
      accepts,
    };
  }

  /** Which offer `payload` takes up, or why it takes up none. */
  match(payload: PaymentPayload, wallet: string, nowSeconds: number): OfferMatch {
    const { accepted } = payload;
    const { authorization } = payload.payload;
    if (accepted.scheme !== 'exact') {
      return refuse('unsupported_scheme', `scheme "${echoed(accepted.scheme)}" is not offered; pay with "exact"`);
    }
    const asset = this.config.assets.find((a) => a.network === accepted.network && sameAddress(a.address, accepted.asset));
    if (!asset) return refuse('unsupported_asset', `asset ${echoed(accepted.asset)} on ${echoed(accepted.network)} is not offered`);
    if (!sameAddress(accepted.payTo, this.config.payTo) || !sameAddress(authorization.to, this.config.payTo)) {
      return refuse('pay_to_mismatch', `payments go to ${this.config.payTo}`);
    }
    if (accepted.extra.name !== asset.name || accepted.extra.version !== asset.version) {
      return refuse('asset_domain_mismatch', `the token's EIP-712 domain is name "${asset.name}", version "${asset.version}"`);
    }
    if (authorization.value !== accepted.amount) return refuse('amount_mismatch', 'the signed value is not the amount of the offer taken');
    const unitsPerCredit = BigInt(asset.unitsPerCredit);
    const amount = BigInt(accepted.amount);
    const credits = amount / unitsPerCredit;
    const smallest = BigInt(Math.min(...this.config.topUpCredits));
    if (amount % unitsPerCredit !== 0n || credits < smallest || credits > BigInt(this.config.maxTopUpCredits)) {
      return refuse(
        'amount_not_offered',
        `a top-up is a whole number of credits from ${smallest} to ${this.config.maxTopUpCredits} (${asset.unitsPerCredit} units per credit)`,
      );
    }
    if (authorization.from.toLowerCase() !== wallet) {
      return refuse('payer_mismatch', 'the payment must be signed by the wallet in x-wallet-address, whose balance it tops up');
    }
    const validAfter = Number(authorization.validAfter);
    const validBefore = Number(authorization.validBefore);
    if (validAfter > nowSeconds + CLOCK_SKEW_S || validBefore < nowSeconds + MIN_VALIDITY_LEFT_S) {
      return refuse('authorization_expired', 'the authorization is not valid now; sign a new one');
    }
    if (validBefore > nowSeconds + this.config.maxTimeoutSeconds + CLOCK_SKEW_S) {
      return refuse('authorization_too_long', `the authorization may stay valid ${this.config.maxTimeoutSeconds} s at most`);
    }
    return { asset, requirements: this.requirements(asset, amount), credits };
  }

  /** The configured top-ups, the smallest raised to the shortfall (within the largest allowed), ascending. */
  private offeredCredits(shortfall: number): number[] {
    const topUps = [...new Set(this.config.topUpCredits)].sort((a, b) => a - b);
    const smallest = Math.min(Math.max(topUps[0], shortfall), this.config.maxTopUpCredits);
    return [smallest, ...topUps.filter((credits) => credits > smallest)];
  }

  private requirements(asset: X402Asset, amount: bigint): PaymentRequirements {
    return {
      scheme: 'exact',
      network: asset.network,
      amount: String(amount),
      asset: asset.address,
      payTo: this.config.payTo,
      maxTimeoutSeconds: this.config.maxTimeoutSeconds,
      extra: { name: asset.name, version: asset.version },
    };
  }
}

function refuse(reason: string, message: string): OfferMatch {
  return { reason, message };
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
