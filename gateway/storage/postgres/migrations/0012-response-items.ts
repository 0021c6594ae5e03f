/**
 * Migration 12: the output items of stored responses, indexed by their ids, for `item_reference`
 * input items. An item goes with its response (the foreign key cascades), however the response goes:
 * DELETE, the expiry sweep, or the quota's trim in `response_put`. Storing a response with its items
 * is a new `response_put` taking the item ids; the old one stays for instances not yet upgraded
 * (their responses simply have no items indexed).
 */
export const name = 'response-items';

export const sql = `
create table response_items (
  item_id text primary key,
  response_seq bigint not null references responses (seq) on delete cascade
);
create index response_items_by_response on response_items (response_seq);

create function response_put(id text, wallet text, created_at bigint, expires_at bigint, body text,
  max_count integer, max_bytes bigint, item_ids text[]) returns void language plpgsql as $$
declare
  new_seq bigint;
begin
  perform pg_advisory_xact_lock(hashtextextended('responses:' || wallet, 0));
  insert into responses (id, wallet, created_at, expires_at, bytes, body)
    values (id, wallet, created_at, expires_at, octet_length(body), body)
    returning seq into new_seq;
  insert into response_items (item_id, response_seq)
    select unnest(item_ids), new_seq
    on conflict (item_id) do nothing;
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
