/**
 * Migration 6: stored responses of POST /v1/responses, per wallet, with their expiry. Storing one
 * takes a per-wallet advisory lock, so the wallet's quota (count and bytes) holds when instances
 * store for one wallet at once; the oldest records go first.
 */
export const name = 'responses';

export const sql = `
create table responses (
  seq bigint generated always as identity primary key,
  id text not null unique,
  wallet text not null,
  created_at bigint not null,
  expires_at bigint not null,
  bytes integer not null,
  body text not null
);
create index responses_by_wallet on responses (wallet, seq);
create index responses_by_expiry on responses (expires_at);

create function response_put(id text, wallet text, created_at bigint, expires_at bigint, body text,
  max_count integer, max_bytes bigint) returns void language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('responses:' || wallet, 0));
  insert into responses (id, wallet, created_at, expires_at, bytes, body)
    values (id, wallet, created_at, expires_at, octet_length(body), body);
  delete from responses r where r.seq in (
    select k.seq from (
      select x.seq, x.expires_at,
        row_number() over (order by x.seq desc) as n,
        sum(x.bytes) over (order by x.seq desc) as running
      from responses x where x.wallet = response_put.wallet
    ) k where k.n > max_count or k.running > max_bytes or k.expires_at <= response_put.created_at
  );
end $$;
`;
