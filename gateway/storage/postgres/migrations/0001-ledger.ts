/**
 * Migration 1: the ledger. One row per wallet (balance and totals), one row per open reservation
 * (with its expiry on the caller's clock, in ms), one row per closed reservation (so a repeated
 * settle answers the same), one row per idempotent grant. Every step is one PL/pgSQL function:
 * one round trip, one transaction, and each takes the wallet's row lock first, so the steps of one
 * wallet are serialized by the database and no two steps can deadlock. Reserve, extend, release
 * and settle commit without waiting for the disk (postgres-ledger.ts says why that is safe, and
 * how a settle still reaches the disk before it is acknowledged).
 */
export const name = 'ledger';

export const sql = `
create table wallets (
  address text primary key,
  credits bigint not null default 0 check (credits >= 0),
  total_deposited bigint not null default 0 check (total_deposited >= 0),
  total_spent bigint not null default 0 check (total_spent >= 0)
);

create table reservations (
  id text primary key,
  wallet text not null references wallets (address),
  amount bigint not null check (amount > 0),
  expires_at bigint not null
);
create index reservations_by_wallet on reservations (wallet, expires_at);
create index reservations_by_expiry on reservations (expires_at);

create table closed_reservations (
  id text primary key,
  wallet text not null,
  charged bigint not null check (charged >= 0),
  closed_at bigint not null
);
create index closed_reservations_by_age on closed_reservations (closed_at);

-- A settle commits without waiting for the disk (its wallet's row lock is held only while it
-- runs), then the gateway commits a write here and waits for that: WAL is flushed in order, so the
-- settle is on disk too. Slots spread concurrent waits over rows.
create table commit_barrier (slot integer primary key, n bigint not null);
insert into commit_barrier select g, 0 from generate_series(0, 63) g;

create table grants (
  idempotency_key text primary key,
  wallet text not null,
  amount bigint not null,
  granted_at bigint not null,
  -- The balance right after the grant: what every repeat answers. Set in the same transaction.
  credits bigint,
  total_deposited bigint,
  total_spent bigint
);

-- Release a locked wallet's expired holds; returns the credits given back.
create function ledger_sweep_locked(w text, now_ms bigint) returns bigint language plpgsql as $$
declare
  freed bigint;
begin
  with expired as (
    delete from reservations where wallet = w and expires_at <= now_ms returning id, amount
  ), closed as (
    insert into closed_reservations (id, wallet, charged, closed_at) select id, w, 0, now_ms from expired
  )
  select coalesce(sum(amount), 0) into freed from expired;
  if freed > 0 then
    update wallets set credits = credits + freed where address = w;
  end if;
  return freed;
end $$;

create function ledger_balance(w text, now_ms bigint,
  out credits bigint, out total_deposited bigint, out total_spent bigint) language plpgsql as $$
begin
  -- Reads take no lock unless a hold has expired and must be swept first.
  if exists (select 1 from reservations r where r.wallet = w and r.expires_at <= now_ms) then
    perform 1 from wallets x where x.address = w for update;
    perform ledger_sweep_locked(w, now_ms);
  end if;
  select x.credits, x.total_deposited, x.total_spent into credits, total_deposited, total_spent
    from wallets x where x.address = w;
  if not found then
    credits := 0; total_deposited := 0; total_spent := 0;
  end if;
end $$;

-- status: 'granted' | 'repeat' | 'conflict'. A grant past 2^53 - 1 raises SQLSTATE SY001.
create function ledger_grant(w text, amount bigint, idempotency_key text, now_ms bigint,
  out status text, out credits bigint, out total_deposited bigint, out total_spent bigint) language plpgsql as $$
declare
  prior grants;
begin
  if idempotency_key is not null then
    -- A concurrent insert of the same key waits here until the first commits, then reads its result.
    insert into grants (idempotency_key, wallet, amount, granted_at) values (idempotency_key, w, amount, now_ms)
      on conflict do nothing;
    if not found then
      select * into prior from grants g where g.idempotency_key = ledger_grant.idempotency_key;
      if prior.wallet <> w or prior.amount <> ledger_grant.amount then
        status := 'conflict';
        return;
      end if;
      status := 'repeat';
      credits := prior.credits; total_deposited := prior.total_deposited; total_spent := prior.total_spent;
      return;
    end if;
  end if;
  insert into wallets (address) values (w) on conflict do nothing;
  perform 1 from wallets x where x.address = w for update;
  perform ledger_sweep_locked(w, now_ms);
  select x.total_deposited into total_deposited from wallets x where x.address = w;
  if total_deposited + amount > 9007199254740991 then
    raise exception 'total_deposited % + % is past 2^53 - 1', total_deposited, amount
      using errcode = 'SY001', detail = total_deposited::text;
  end if;
  update wallets x set credits = x.credits + amount, total_deposited = x.total_deposited + amount
    where x.address = w returning x.credits, x.total_deposited, x.total_spent into credits, total_deposited, total_spent;
  if idempotency_key is not null then
    update grants g set credits = ledger_grant.credits, total_deposited = ledger_grant.total_deposited,
      total_spent = ledger_grant.total_spent where g.idempotency_key = ledger_grant.idempotency_key;
  end if;
  status := 'granted';
end $$;

-- ok = false: the wallet holds fewer than amount spendable credits (credits says how many).
create function ledger_reserve(w text, id text, amount bigint, now_ms bigint, expires_at bigint,
  out ok boolean, out credits bigint) language plpgsql as $$
begin
  perform set_config('synchronous_commit', 'off', true); -- see postgres-ledger.ts: only holds change
  perform 1 from wallets x where x.address = w for update;
  if not found then
    ok := false; credits := 0;
    return;
  end if;
  perform ledger_sweep_locked(w, now_ms);
  update wallets x set credits = x.credits - amount where x.address = w and x.credits >= amount returning x.credits into credits;
  if not found then
    ok := false;
    select x.credits into credits from wallets x where x.address = w;
    return;
  end if;
  insert into reservations values (id, w, amount, expires_at);
  ok := true;
end $$;

-- status: 'ok' | 'closed' (settled, released or expired) | 'insufficient'.
create function ledger_extend(w text, id text, amount bigint, now_ms bigint, expires_at bigint,
  out status text, out held bigint, out credits bigint) language plpgsql as $$
begin
  perform set_config('synchronous_commit', 'off', true); -- see postgres-ledger.ts: only holds change
  perform 1 from wallets x where x.address = w for update;
  if not found then
    status := 'closed'; held := 0; credits := 0;
    return;
  end if;
  perform ledger_sweep_locked(w, now_ms);
  select x.credits into credits from wallets x where x.address = w;
  select r.amount into held from reservations r where r.id = ledger_extend.id and r.wallet = w;
  if not found then
    status := 'closed';
    return;
  end if;
  if credits < amount then
    status := 'insufficient';
    return;
  end if;
  update wallets x set credits = x.credits - amount where x.address = w returning x.credits into credits;
  -- Work that asks for more is alive: its hold lives another full TTL.
  update reservations r set amount = r.amount + ledger_extend.amount, expires_at = ledger_extend.expires_at
    where r.id = ledger_extend.id returning r.amount into held;
  status := 'ok';
end $$;

-- Charge least(cost, held) and give the rest back. A repeat answers the first charge; an unknown
-- (long-forgotten) hold charges nothing.
create function ledger_settle(w text, id text, cost bigint, now_ms bigint,
  out charged bigint, out remaining bigint) language plpgsql as $$
declare
  held bigint;
begin
  perform set_config('synchronous_commit', 'off', true); -- the caller waits on commit_barrier
  perform 1 from wallets x where x.address = w for update;
  if not found then
    charged := 0; remaining := 0;
    return;
  end if;
  perform ledger_sweep_locked(w, now_ms);
  select c.charged into charged from closed_reservations c where c.id = ledger_settle.id and c.wallet = w;
  if found then
    select x.credits into remaining from wallets x where x.address = w;
    return;
  end if;
  delete from reservations r where r.id = ledger_settle.id and r.wallet = w returning r.amount into held;
  if not found then
    charged := 0;
    select x.credits into remaining from wallets x where x.address = w;
    return;
  end if;
  charged := least(cost, held);
  update wallets x set credits = x.credits + held - charged, total_spent = x.total_spent + charged
    where x.address = w returning x.credits into remaining;
  insert into closed_reservations values (id, w, charged, now_ms);
end $$;

create function ledger_release(w text, id text, now_ms bigint) returns void language plpgsql as $$
declare
  held bigint;
begin
  perform set_config('synchronous_commit', 'off', true); -- see postgres-ledger.ts: only holds change
  perform 1 from wallets x where x.address = w for update;
  if not found then
    return;
  end if;
  perform ledger_sweep_locked(w, now_ms);
  delete from reservations r where r.id = ledger_release.id and r.wallet = w returning r.amount into held;
  if found then
    update wallets x set credits = x.credits + held where x.address = w;
    insert into closed_reservations values (id, w, 0, now_ms);
  end if;
end $$;
`;
