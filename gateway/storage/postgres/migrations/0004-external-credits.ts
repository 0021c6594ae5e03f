/**
 * Migration 4: outside payments (deposits, x402). One row per payment, kept forever: its key
 * (source, external_id) is what makes a payment count once, whatever retries, restarts or
 * instances do. One row per (wallet, remainder key) with the units below one credit. A payment,
 * its remainder and the wallet's credits change in one function call: one transaction, with the
 * payment's row inserted first (a concurrent repeat waits on it), then the wallet's row lock, then
 * the remainder's, in that order everywhere.
 */
export const name = 'external-credits';

export const sql = `
create table external_credits (
  source text not null,
  external_id text not null,
  wallet text not null,
  units numeric(78, 0) not null check (units > 0),
  units_per_credit numeric(78, 0) not null check (units_per_credit > 0),
  remainder_key text not null,
  -- Set in the same transaction as the insert: what the payment added, and the remainder after it.
  credits bigint,
  remainder numeric(78, 0),
  credited_at bigint not null,
  primary key (source, external_id)
);
create index external_credits_by_wallet on external_credits (wallet);

create table credit_remainders (
  wallet text not null,
  remainder_key text not null,
  units numeric(78, 0) not null check (units >= 0),
  primary key (wallet, remainder_key)
);

-- status: 'credited' | 'repeat' | 'conflict' (the id was credited with another wallet, amount,
-- rate or remainder key). A total past 2^53 - 1 raises SQLSTATE SY001 and records nothing.
create function ledger_credit_external(w text, src text, ext_id text, paid numeric, per_credit numeric, rem_key text,
  now_ms bigint, out status text, out added bigint, out remainder numeric,
  out credits bigint, out total_deposited bigint, out total_spent bigint) language plpgsql as $$
declare
  prior external_credits;
  kept numeric;
begin
  insert into external_credits (source, external_id, wallet, units, units_per_credit, remainder_key, credited_at)
    values (src, ext_id, w, paid, per_credit, rem_key, now_ms) on conflict do nothing;
  if not found then
    select * into prior from external_credits e where e.source = src and e.external_id = ext_id;
    if prior.wallet <> w or prior.units <> paid or prior.units_per_credit <> per_credit or prior.remainder_key <> rem_key then
      status := 'conflict';
      return;
    end if;
    status := 'repeat';
    added := prior.credits;
    remainder := prior.remainder;
    select b.credits, b.total_deposited, b.total_spent into credits, total_deposited, total_spent from ledger_balance(w, now_ms) b;
    return;
  end if;
  insert into wallets (address) values (w) on conflict do nothing;
  perform 1 from wallets x where x.address = w for update;
  perform ledger_sweep_locked(w, now_ms);
  insert into credit_remainders (wallet, remainder_key, units) values (w, rem_key, 0) on conflict do nothing;
  select r.units into kept from credit_remainders r where r.wallet = w and r.remainder_key = rem_key for update;
  added := div(kept + paid, per_credit);
  remainder := mod(kept + paid, per_credit);
  select x.total_deposited into total_deposited from wallets x where x.address = w;
  if total_deposited::numeric + added > 9007199254740991 then
    raise exception 'total_deposited % + % is past 2^53 - 1', total_deposited, added
      using errcode = 'SY001', detail = total_deposited::text;
  end if;
  update wallets x set credits = x.credits + added, total_deposited = x.total_deposited + added
    where x.address = w returning x.credits, x.total_deposited, x.total_spent into credits, total_deposited, total_spent;
  update credit_remainders r set units = ledger_credit_external.remainder where r.wallet = w and r.remainder_key = rem_key;
  update external_credits e set credits = added, remainder = ledger_credit_external.remainder
    where e.source = src and e.external_id = ext_id;
  status := 'credited';
end $$;
`;
