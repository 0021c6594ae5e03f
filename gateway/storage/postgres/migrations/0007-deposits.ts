/**
 * Migration 7: deposit records (gateway/deposits/), one per Transfer log to a treasury by
 * (chain id, tx hash, log index), and the scan cursor per chain that every instance's watcher
 * shares. The exactly-once credit is the ledger's external_credits row (migration 4); these rows
 * say what the watcher saw and where each deposit stands.
 */
export const name = 'deposits';

export const sql = `
create table deposits (
  seq bigint generated always as identity unique,
  chain_id bigint not null,
  tx_hash text not null,
  log_index integer not null,
  block_number bigint not null,
  block_hash text not null,
  token text not null,
  wallet text not null,
  amount numeric(78, 0) not null,
  status text not null check (status in ('pending', 'credited', 'reorged')),
  credits bigint,
  seen_at bigint not null,
  credited_at bigint,
  primary key (chain_id, tx_hash, log_index)
);
create index deposits_by_wallet on deposits (wallet, seq);
create index deposits_pending on deposits (chain_id, block_number) where status = 'pending';

create table deposit_cursors (chain_id bigint primary key, next_block bigint not null);
`;
