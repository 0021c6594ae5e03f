/**
 * What the gateway offers on a 402 and which payments take up an offer: tables over the pure
 * rules of gateway/x402/offer.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X402Offers } from '../../../gateway/x402/offer.js';
import type { X402Config } from '../../../gateway/config.js';
import type { PaymentPayload } from '../../../gateway/x402/wire.js';

const PAY_TO = '0x' + 'aa'.repeat(20);
const USDC = '0x' + 'bb'.repeat(20);
const WALLET = '0x' + 'cc'.repeat(20);
const NOW = 1_800_000_000;

const config: X402Config = {
  facilitatorUrl: 'http://127.0.0.1:4021',
  facilitatorHeaders: {},
  payTo: PAY_TO,
  assets: [
    { network: 'eip155:8453', address: USDC, name: 'USD Coin', version: '2', unitsPerCredit: '10000', rpcUrl: 'http://127.0.0.1:8545' },
    { network: 'eip155:84532', address: USDC, name: 'USDC', version: '2', unitsPerCredit: '20000', rpcUrl: 'http://127.0.0.1:8546' },
  ],
  topUpCredits: [1000, 100],
  maxTopUpCredits: 10_000,
  maxTimeoutSeconds: 300,
  verifyTimeoutMs: 1000,
  settleTimeoutMs: 1000,
  reconcileIntervalMs: 1000,
};
const offers = new X402Offers(config);

test('the offer: every top-up on every asset, smallest first, the smallest raised to the shortfall (up to the maximum)', () => {
  const table: Array<[number, number[]]> = [
    [0, [100, 1000]],
    [1, [100, 1000]],
    [250, [250, 1000]],
    [1000, [1000]],
    [4321, [4321]],
    [50_000, [10_000]],
  ];
  for (const [shortfall, credits] of table) {
    const required = offers.paymentRequired('https://gw.example/v1/chat/completions', shortfall);
    const expected = credits.flatMap((c) => [
      { network: 'eip155:8453', amount: String(c * 10_000) },
      { network: 'eip155:84532', amount: String(c * 20_000) },
    ]);
    assert.deepEqual(
      required.accepts.map((a) => ({ network: a.network, amount: a.amount })),
      expected,
      `shortfall ${shortfall}`,
    );
  }
  const required = offers.paymentRequired('https://gw.example/v1/chat/completions', 0, 'payer_mismatch');
  assert.equal(required.x402Version, 2);
  assert.equal(required.error, 'payer_mismatch');
  assert.deepEqual(required.accepts[0], {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '1000000',
    asset: USDC,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
  });
});

/** A payment for the first offer (100 credits on eip155:8453), signed by WALLET, valid now. */
function goodPayment(): PaymentPayload {
  const accepted = offers.paymentRequired('https://gw.example/v1/chat/completions', 0).accepts[0];
  return {
    x402Version: 2,
    accepted,
    payload: {
      signature: '0x' + '11'.repeat(65),
      authorization: {
        from: WALLET.toUpperCase().replace('0X', '0x'),
        to: PAY_TO,
        value: accepted.amount,
        validAfter: String(NOW - 600),
        validBefore: String(NOW + 300),
        nonce: '0x' + '22'.repeat(32),
      },
    },
  };
}

test('a payment takes up an offer only when it matches it in all but the top-up chosen; each refusal names its reason', () => {
  const ok = offers.match(goodPayment(), WALLET, NOW);
  assert.ok(ok.asset);
  assert.equal(ok.credits, 100n);
  assert.equal(ok.requirements.amount, '1000000');

  const table: Array<[string, (p: PaymentPayload) => void]> = [
    ['unsupported_scheme', (p) => (p.accepted.scheme = 'upto')],
    ['unsupported_asset', (p) => (p.accepted.asset = '0x' + 'dd'.repeat(20))],
    ['unsupported_asset', (p) => (p.accepted.network = 'eip155:1')],
    ['pay_to_mismatch', (p) => (p.accepted.payTo = '0x' + 'ee'.repeat(20))],
    ['pay_to_mismatch', (p) => (p.payload.authorization.to = '0x' + 'ee'.repeat(20))],
    ['asset_domain_mismatch', (p) => (p.accepted.extra = { name: 'USD Coin', version: '1' })],
    ['amount_mismatch', (p) => (p.payload.authorization.value = '999999')],
    ['amount_not_offered', (p) => (p.accepted.amount = p.payload.authorization.value = '1000001')],
    ['amount_not_offered', (p) => (p.accepted.amount = p.payload.authorization.value = String(99 * 10_000))],
    ['amount_not_offered', (p) => (p.accepted.amount = p.payload.authorization.value = String(10_001 * 10_000))],
    ['payer_mismatch', (p) => (p.payload.authorization.from = '0x' + 'ff'.repeat(20))],
    ['authorization_expired', (p) => (p.payload.authorization.validBefore = String(NOW + 5))],
    ['authorization_expired', (p) => (p.payload.authorization.validAfter = String(NOW + 61))],
    ['authorization_too_long', (p) => (p.payload.authorization.validBefore = String(NOW + 300 + 61))],
  ];
  for (const [reason, spoil] of table) {
    const payment = goodPayment();
    spoil(payment);
    const match = offers.match(payment, WALLET, NOW);
    assert.equal(match.asset, undefined, reason);
    assert.equal('reason' in match && match.reason, reason);
  }
  // Any whole top-up within the bounds is taken, not only the ones listed (the offer's smallest follows the hold).
  const custom = goodPayment();
  custom.accepted.amount = custom.payload.authorization.value = String(4321 * 10_000);
  const taken = offers.match(custom, WALLET, NOW);
  assert.equal(taken.asset && taken.credits, 4321n);
});
