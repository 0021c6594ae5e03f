/**
 * Migration 2: API keys, by the SHA-256 hex of the key (never the key). A revoked key's row is
 * deleted, as in the embedded store. Minting takes a per-wallet advisory lock, so the cap on keys
 * per wallet holds when instances mint for one wallet at once.
 */
export const name = 'api-keys';

export const sql = `
create table api_keys (
  hash text primary key,
  id text not null unique,
  address text not null,
  name text not null,
  created_at bigint not null,
  last_used_at bigint,
  verified boolean not null,
  prefix text not null,
  -- Insertion order: "oldest first" even for keys minted in the same second.
  seq bigint generated always as identity
);
create index api_keys_by_address on api_keys (address, seq);

-- false: the wallet already holds max_keys keys.
create function api_key_insert(hash text, id text, address text, name text, created_at bigint,
  verified boolean, prefix text, max_keys integer) returns boolean language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('api_keys:' || address, 0));
  if (select count(*) from api_keys k where k.address = api_key_insert.address) >= max_keys then
    return false;
  end if;
  insert into api_keys (hash, id, address, name, created_at, last_used_at, verified, prefix)
    values (hash, id, address, name, created_at, null, verified, prefix);
  return true;
end $$;
`;
