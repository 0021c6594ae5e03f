/**
 * Migration 14: API keys' limits and spend live with the ledger (issue 42; 13 is the usage
 * records'). `key_limits` holds, per key id, the limits (ledger/key-budgets.ts) and the stored
 * spend counters: lifetime, and the UTC day (days since the epoch) `day_spent` counts. A hold names
 * its key (`reservations.key_id`), so a key's held credits are the sum of its open holds, and the
 * sweeps that give expired holds back give them back to the key too, unchanged.
 *
 * `ledger_batch` takes each step's key ('' for none) beside migration 13's usage records, in one
 * signature `(kinds, wallets, ids, amounts, keys, now_ms, expires_at, usages)`, and answers why a
 * step was refused (`refusal`: credits, key_budget, key_expired) and what the key may still spend
 * (`key_remaining`, null: no credit cap or no key row). A reserve or charge checks and takes from
 * the wallet and the key under both row locks (wallets first, in address order, then keys, in id
 * order: every path takes them in that order); a settle never takes a key past a cap, and writes
 * its usage record with what it did charge. Everything else is migration 13's body unchanged.
 * Migration 13's seven-argument overload (usages, no keys) is dropped: it was never released, and
 * one new signature keeps every call unambiguous. `ledger_extend` checks the hold's key the same
 * way. The six-argument `ledger_batch` stays for an instance still running the previous release
 * during a rolling upgrade (it knows no keys, so it enforces no key budget: limits are set through
 * new instances; and it writes no usage records).
 */
export const name = 'key-limits';

export const sql = `
create table key_limits (
  key_id text primary key,
  wallet text not null,
  max_credits bigint check (max_credits >= 0),
  max_credits_per_day bigint check (max_credits_per_day >= 0),
  expires_at bigint,
  tools text[],
  models text[],
  spent bigint not null default 0 check (spent >= 0),
  day integer not null default 0,
  day_spent bigint not null default 0 check (day_spent >= 0)
);
create index key_limits_by_wallet on key_limits (wallet);

alter table reservations add column key_id text;
create index reservations_by_key on reservations (key_id) where key_id is not null;

-- What the key may still hold or charge (null: no credit cap), given what its open holds hold.
create function key_left(k key_limits, held bigint, now_ms bigint) returns bigint language sql immutable as $f$
  select case when k.max_credits is null and k.max_credits_per_day is null then null else greatest(0, least(
    k.max_credits - k.spent - held,
    k.max_credits_per_day - (case when k.day = (now_ms / 86400000) then k.day_spent else 0 end) - held)) end
$f$;

-- What the key's open holds hold (its wallet's expired holds were swept by the caller).
create function key_held(k text) returns bigint language sql stable as $f$
  select coalesce(sum(r.amount), 0)::bigint from reservations r where r.key_id = k
$f$;

-- Count charged credits on the key, on now_ms's UTC day; answers the row after.
create function key_spend_locked(k text, charged bigint, now_ms bigint) returns key_limits language sql as $f$
  update key_limits x set spent = x.spent + charged,
    day_spent = (case when x.day = (now_ms / 86400000) then x.day_spent else 0 end) + charged,
    day = (now_ms / 86400000)
  where x.key_id = k returning x.*
$f$;

drop function ledger_batch(text[], text[], text[], bigint[], bigint, bigint, jsonb);

create function ledger_batch(kinds text[], wallets text[], ids text[], amounts bigint[], keys text[], now_ms bigint, expires_at bigint,
  usages jsonb)
  returns table (ok boolean, charged bigint, credits bigint, refusal text, key_remaining bigint) language plpgsql as $$
declare
  i integer;
  n integer := coalesce(array_length(kinds, 1), 0);
  w text;
  held bigint;
  hk text;
  kr key_limits;
  has_key boolean;
  u jsonb;
  today bigint := now_ms / 86400000;
begin
  if not (kinds && array['settle', 'charge']) then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  -- Every wallet's row lock first, in address order, so two batches cannot deadlock (and a
  -- refused reserve reports the balance it was refused on); then the keys', in id order.
  if n > 1 then
    perform 1 from wallets x where x.address = any(wallets) order by x.address for update;
  elsif n = 1 then
    perform 1 from wallets x where x.address = wallets[1] for update;
  end if;
  if exists (select 1 from unnest(keys) k where k <> '') then
    perform 1 from key_limits x where x.key_id = any(keys) order by x.key_id for update;
  end if;
  foreach w in array case when n > 1 then array(select distinct unnest(wallets)) else wallets end loop
    if exists (select 1 from reservations r where r.wallet = w and r.expires_at <= now_ms) then
      perform ledger_sweep_locked(w, now_ms);
    end if;
  end loop;
  for i in 1 .. n loop
    ok := true; charged := 0; credits := 0; refusal := null; key_remaining := null;
    has_key := false;
    u := usages -> (i - 1);
    if keys[i] <> '' and kinds[i] in ('reserve', 'charge') then
      select * into kr from key_limits x where x.key_id = keys[i];
      has_key := found;
      if has_key then
        key_remaining := key_left(kr, key_held(keys[i]), now_ms);
        if kr.expires_at is not null and now_ms >= kr.expires_at then
          ok := false; refusal := 'key_expired';
        elsif key_remaining is not null and key_remaining < amounts[i] then
          ok := false; refusal := 'key_budget';
        end if;
        if not ok then
          select coalesce(max(x.credits), 0) into credits from wallets x where x.address = wallets[i];
          return next;
          continue;
        end if;
      end if;
    end if;
    if kinds[i] = 'reserve' then
      update wallets x set credits = x.credits - amounts[i] where x.address = wallets[i] and x.credits >= amounts[i]
        returning x.credits into credits;
      if found then
        insert into reservations (id, wallet, amount, expires_at, key_id)
          values (ids[i], wallets[i], amounts[i], expires_at, case when has_key then keys[i] end);
        key_remaining := key_remaining - amounts[i];
      else
        ok := false; refusal := 'credits';
        select coalesce(max(x.credits), 0) into credits from wallets x where x.address = wallets[i];
      end if;
    elsif kinds[i] = 'settle' then
      -- Charge least(cost, held), never past the key's caps on this day, and give the rest back.
      delete from reservations r where r.id = ids[i] and r.wallet = wallets[i] returning r.amount, r.key_id into held, hk;
      if found then
        charged := least(amounts[i], held);
        if hk is not null then
          select * into kr from key_limits x where x.key_id = hk for update;
          if found then
            if kr.max_credits_per_day is not null then
              charged := least(charged, greatest(0, kr.max_credits_per_day - (case when kr.day = today then kr.day_spent else 0 end)));
            end if;
            if kr.max_credits is not null then
              charged := least(charged, greatest(0, kr.max_credits - kr.spent));
            end if;
            kr := key_spend_locked(hk, charged, now_ms);
            key_remaining := key_left(kr, key_held(hk), now_ms);
          end if;
        end if;
        update wallets x set credits = x.credits + held - charged, total_spent = x.total_spent + charged
          where x.address = wallets[i] returning x.credits into credits;
        insert into closed_reservations values (ids[i], wallets[i], charged, now_ms);
        if charged > 0 and jsonb_typeof(u) = 'object' then
          perform ledger_record_spend(wallets[i], charged, u, now_ms);
        end if;
      else
        -- A repeat answers the first charge; an unknown (long-forgotten) hold charges nothing.
        select coalesce(max(c.charged), 0) into charged from closed_reservations c where c.id = ids[i] and c.wallet = wallets[i];
        select coalesce(max(x.credits), 0) into credits from wallets x where x.address = wallets[i];
      end if;
    elsif kinds[i] = 'charge' then
      -- All of it or nothing, with no hold: work whose result waits for this step to be granted.
      update wallets x set credits = x.credits - amounts[i], total_spent = x.total_spent + amounts[i]
        where x.address = wallets[i] and x.credits >= amounts[i] returning x.credits into credits;
      if found then
        charged := amounts[i];
        if has_key and charged > 0 then
          kr := key_spend_locked(keys[i], charged, now_ms);
          key_remaining := key_left(kr, key_held(keys[i]), now_ms);
        end if;
        if charged > 0 and jsonb_typeof(u) = 'object' then
          perform ledger_record_spend(wallets[i], charged, u, now_ms);
        end if;
      else
        ok := amounts[i] = 0;
        if not ok then refusal := 'credits'; end if;
        select coalesce(max(x.credits), 0) into credits from wallets x where x.address = wallets[i];
      end if;
    elsif kinds[i] = 'release' then
      delete from reservations r where r.id = ids[i] and r.wallet = wallets[i] returning r.amount into held;
      if found then
        update wallets x set credits = x.credits + held where x.address = wallets[i];
        insert into closed_reservations values (ids[i], wallets[i], 0, now_ms);
      end if;
    else
      raise exception 'unknown ledger step %', kinds[i];
    end if;
    return next;
  end loop;
end $$;

-- Migration 1's extend, waiting for the disk (migration 9), and checking the hold's key: status
-- 'key_budget' with credits = what the key may still hold.
create or replace function ledger_extend(w text, id text, amount bigint, now_ms bigint, expires_at bigint,
  out status text, out held bigint, out credits bigint) language plpgsql set synchronous_commit = on as $$
declare
  hk text;
  kr key_limits;
  kleft bigint;
begin
  perform 1 from wallets x where x.address = w for update;
  if not found then
    status := 'closed'; held := 0; credits := 0;
    return;
  end if;
  perform ledger_sweep_locked(w, now_ms);
  select x.credits into credits from wallets x where x.address = w;
  select r.amount, r.key_id into held, hk from reservations r where r.id = ledger_extend.id and r.wallet = w;
  if not found then
    status := 'closed';
    return;
  end if;
  if hk is not null then
    select * into kr from key_limits x where x.key_id = hk for update;
    if found then
      kleft := key_left(kr, key_held(hk), now_ms);
      if kleft is not null and kleft < amount then
        status := 'key_budget'; credits := kleft;
        return;
      end if;
    end if;
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
`;
