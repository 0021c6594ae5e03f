/**
 * Migration 13: usage records (gateway/ledger/usage.ts), each written in the transaction of the
 * ledger step it records. `ledger_batch` gains a last argument, `usages` (a JSON array beside the
 * steps: a settle's or charge's record, or null), and a settle or charge that takes credits
 * writes its record in the batch's transaction; everything else is migration 11's body. The
 * six-argument `ledger_batch` stays for an instance still running the previous release during a
 * rolling upgrade (it writes no records). Grants and outside payments write theirs in the same
 * statement as their function (a CTE, postgres-ledger.ts), as does a lone charge.
 */
export const name = 'usage-records';

export const sql = `
create table usage_records (
  seq bigint generated always as identity primary key,
  id text not null,
  wallet text not null,
  at bigint not null,
  kind text not null,
  request_id text,
  key_id text,
  model text,
  tools jsonb not null default '{}',
  prompt_tokens bigint not null default 0,
  completion_tokens bigint not null default 0,
  credits bigint not null,
  source_id text
);
create index usage_records_by_wallet on usage_records (wallet, at desc, seq desc);
create index usage_records_by_age on usage_records (at);

-- A spend's record: u is {id, kind, request_id, key_id, model, tools, prompt_tokens, completion_tokens}.
create function ledger_record_spend(w text, spent bigint, u jsonb, now_ms bigint) returns void language sql as $f$
  insert into usage_records (id, wallet, at, kind, request_id, key_id, model, tools, prompt_tokens, completion_tokens, credits)
  values (u ->> 'id', w, now_ms, u ->> 'kind', u ->> 'request_id', u ->> 'key_id', u ->> 'model', coalesce(u -> 'tools', '{}'),
    coalesce((u ->> 'prompt_tokens')::bigint, 0), coalesce((u ->> 'completion_tokens')::bigint, 0), spent)
$f$;

create function ledger_batch(kinds text[], wallets text[], ids text[], amounts bigint[], now_ms bigint, expires_at bigint,
  usages jsonb)
  returns table (ok boolean, charged bigint, credits bigint) language plpgsql as $$
declare
  i integer;
  n integer := coalesce(array_length(kinds, 1), 0);
  w text;
  held bigint;
  u jsonb;
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
    u := usages -> (i - 1);
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
        if charged > 0 and jsonb_typeof(u) = 'object' then
          perform ledger_record_spend(wallets[i], charged, u, now_ms);
        end if;
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
