/**
 * Migration 5: the gateway's kept chat rounds (DATABASE_URL without REDIS_URL), by the hash of
 * the wallet and the client call ids; `expires_at` in ms on the writer's clock. Reads skip expired
 * rows; a periodic sweep deletes them.
 */
export const name = 'kept-rounds';

export const sql = `
create table kept_rounds (
  key text primary key,
  value text not null,
  expires_at bigint not null
);
create index kept_rounds_by_expiry on kept_rounds (expires_at);
`;
