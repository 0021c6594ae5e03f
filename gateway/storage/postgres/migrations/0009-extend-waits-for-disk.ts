/**
 * Migration 9: an extend's commit waits for the disk. Migration 1's `ledger_extend` turned
 * `synchronous_commit` off as if it only moved held credits, but a hold grown and then forgotten
 * by a crash of PostgreSQL would be settled from its old, smaller amount: the work already done
 * on the extension would go uncharged. A SET clause on the function restores the session's
 * setting (on) when it returns, which undoes the function's own `set_config(…, 'off', true)`.
 */
export const name = 'extend-waits-for-disk';

export const sql = `
alter function ledger_extend(text, text, bigint, bigint, bigint) set synchronous_commit = on;
`;
