/**
 * Migration 8: x402 payments sent for settlement (x402/payment-records.ts). A row is
 * claimed before the facilitator is asked to settle and stays `pending` until the payment is
 * credited (or certainly never settled), so a settlement whose outcome was unknown is reconciled
 * from the chain by whichever instance runs the reconciler next.
 */
export const name = 'x402-payments';

export const sql = `
create table x402_payments (
  id text primary key,
  wallet text not null,
  network text not null,
  asset text not null,
  amount numeric(78, 0) not null check (amount > 0),
  nonce text not null,
  signature text not null,
  valid_before bigint not null,
  -- The chain's latest block at the claim: where reconciliation looks for the settlement's event.
  from_block numeric(78, 0) not null,
  -- The terms offered at the claim: a config change later never re-judges a pending payment.
  pay_to text not null,
  units_per_credit numeric(78, 0) not null check (units_per_credit > 0),
  state text not null check (state in ('pending', 'credited')),
  tx text,
  seq bigint generated always as identity
);
create index x402_payments_pending on x402_payments (seq) where state = 'pending';
`;
