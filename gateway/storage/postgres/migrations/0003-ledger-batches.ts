/**
 * Migration 3: ledger steps in batches. One call of `ledger_batch` applies many reserves, settles
 * and releases (an instance's steps that queued while its previous batch ran) in one transaction:
 * one round trip and one commit for all of them, where each step was its own before. It locks
 * every wallet it touches in address order first, so two batches (or a batch and a single step)
 * do not deadlock, unless a wallet row is created between a batch's lock and its step (that row
 * was not locked in order); PostgreSQL then aborts one batch, which ledger/postgres-ledger-batches.ts sends
 * again. It sweeps each wallet's expired holds once.
 *
 * Each step's logic is the one of migration 1's single-step functions, minus their lock and
 * sweep. Those functions stay, unchanged, for an instance still running the previous release
 * during a rolling upgrade.
 */
export const name = 'ledger-batches';

export const sql = `
-- ok = false: the wallet holds fewer than amount spendable credits (credits says how many).
create function ledger_reserve_locked(w text, id text, amount bigint, expires_at bigint,
  out ok boolean, out credits bigint) language plpgsql as $$
begin
  update wallets x set credits = x.credits - amount where x.address = w and x.credits >= amount returning x.credits into credits;
  if not found then
    ok := false;
    select coalesce(max(x.credits), 0) into credits from wallets x where x.address = w;
    return;
  end if;
  insert into reservations values (id, w, amount, expires_at);
  ok := true;
end $$;

-- Charge least(cost, held) and give the rest back. A repeat answers the first charge; an unknown
-- (long-forgotten) hold charges nothing.
create function ledger_settle_locked(w text, id text, cost bigint, now_ms bigint,
  out charged bigint, out remaining bigint) language plpgsql as $$
declare
  held bigint;
begin
  select c.charged into charged from closed_reservations c where c.id = ledger_settle_locked.id and c.wallet = w;
  if found then
    select x.credits into remaining from wallets x where x.address = w;
    return;
  end if;
  delete from reservations r where r.id = ledger_settle_locked.id and r.wallet = w returning r.amount into held;
  if not found then
    charged := 0;
    select coalesce(max(x.credits), 0) into remaining from wallets x where x.address = w;
    return;
  end if;
  charged := least(cost, held);
  update wallets x set credits = x.credits + held - charged, total_spent = x.total_spent + charged
    where x.address = w returning x.credits into remaining;
  insert into closed_reservations values (id, w, charged, now_ms);
end $$;

create function ledger_release_locked(w text, id text, now_ms bigint) returns void language plpgsql as $$
declare
  held bigint;
begin
  delete from reservations r where r.id = ledger_release_locked.id and r.wallet = w returning r.amount into held;
  if found then
    update wallets x set credits = x.credits + held where x.address = w;
    insert into closed_reservations values (id, w, 0, now_ms);
  end if;
end $$;

-- Steps in order: kinds[i] is 'reserve' | 'settle' | 'release' for wallets[i], ids[i] (the hold)
-- and amounts[i] (credits to hold, or the cost to charge). One row per step, in order:
-- reserve → ok, credits; settle → ok, charged, credits (remaining); release → ok.
-- Only holds change unless a settle is in the batch: then the commit waits for the disk, with
-- every settle of the batch behind that one wait.
create function ledger_batch(kinds text[], wallets text[], ids text[], amounts bigint[], now_ms bigint, expires_at bigint)
  returns table (ok boolean, charged bigint, credits bigint) language plpgsql as $$
declare
  i integer;
  w text;
begin
  if not ('settle' = any(kinds)) then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  perform 1 from wallets x where x.address = any(wallets) order by x.address for update;
  for w in select distinct unnest(wallets) loop
    perform ledger_sweep_locked(w, now_ms);
  end loop;
  for i in 1 .. coalesce(array_length(kinds, 1), 0) loop
    ok := true; charged := 0; credits := 0;
    if kinds[i] = 'reserve' then
      select r.ok, r.credits into ok, credits from ledger_reserve_locked(wallets[i], ids[i], amounts[i], expires_at) r;
    elsif kinds[i] = 'settle' then
      select s.charged, s.remaining into charged, credits from ledger_settle_locked(wallets[i], ids[i], amounts[i], now_ms) s;
    elsif kinds[i] = 'release' then
      perform ledger_release_locked(wallets[i], ids[i], now_ms);
    else
      raise exception 'unknown ledger step %', kinds[i];
    end if;
    return next;
  end loop;
end $$;
`;
