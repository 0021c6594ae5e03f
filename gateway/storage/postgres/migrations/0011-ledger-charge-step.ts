/**
 * Migration 11: `ledger_batch` gains a `charge` step: the cost taken at once, all of it or
 * nothing, with no hold (a conditional UPDATE). Work whose result the client sees only after it
 * is charged (a JSON answer) needs no hold while it runs when the wallet has plenty: one ledger
 * round trip and one commit instead of a reserve's and a settle's. A batch holding a charge waits
 * for the disk, as one holding a settle does. Everything else is migration 10's body unchanged.
 */
export const name = 'ledger-charge-step';

export const sql = `
create or replace function ledger_batch(kinds text[], wallets text[], ids text[], amounts bigint[], now_ms bigint, expires_at bigint)
  returns table (ok boolean, charged bigint, credits bigint) language plpgsql as $$
declare
  i integer;
  n integer := coalesce(array_length(kinds, 1), 0);
  w text;
  held bigint;
begin
  if not (kinds && array['settle', 'charge']) then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  -- Every wallet's row lock first, in address order, so two batches cannot deadlock (and a
  -- refused reserve reports the balance it was refused on).
  if n > 1 then
    perform 1 from wallets x where x.address = any(wallets) order by x.address for update;
  elsif n = 1 then
    perform 1 from wallets x where x.address = wallets[1] for update;
  end if;
  foreach w in array case when n > 1 then array(select distinct unnest(wallets)) else wallets end loop
    if exists (select 1 from reservations r where r.wallet = w and r.expires_at <= now_ms) then
      perform ledger_sweep_locked(w, now_ms);
    end if;
  end loop;
  for i in 1 .. n loop
    ok := true; charged := 0; credits := 0;
    if kinds[i] = 'reserve' then
      update wallets x set credits = x.credits - amounts[i] where x.address = wallets[i] and x.credits >= amounts[i]
        returning x.credits into credits;
      if found then
        insert into reservations values (ids[i], wallets[i], amounts[i], expires_at);
      else
        ok := false;
        select coalesce(max(x.credits), 0) into credits from wallets x where x.address = wallets[i];
      end if;
    elsif kinds[i] = 'settle' then
      -- Charge least(cost, held) and give the rest back.
      delete from reservations r where r.id = ids[i] and r.wallet = wallets[i] returning r.amount into held;
      if found then
        charged := least(amounts[i], held);
        update wallets x set credits = x.credits + held - charged, total_spent = x.total_spent + charged
          where x.address = wallets[i] returning x.credits into credits;
        insert into closed_reservations values (ids[i], wallets[i], charged, now_ms);
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
      else
        ok := amounts[i] = 0;
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
`;
