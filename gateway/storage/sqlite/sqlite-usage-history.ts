/**
 * Usage records in the DATA_DIR SQLite file (embedded mode), read on the ledger's connection:
 * the embedded ledger creates `usage_records` and writes each record in its step's commit; this
 * reads a wallet's, newest first, and sweeps the old ones.
 *
 * @example
 *   const history = sqliteUsageHistory(db)   // after openEmbeddedLedger(db, …) created the table
 *   const { records, next } = await history.page({ wallet }, 50)
 */
import type { UsageCursor, UsageFilter, UsageGrouping, UsageHistory, UsageTotal } from '../../ledger/usage.js';
import { CREDITING_KINDS, usageRecordFromRow, type UsageRow } from '../usage-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** Records deleted per statement by a sweep. */
const SWEEP_SLICE = 2_000;

const GROUP_COLUMN: Record<UsageGrouping, string> = {
  day: "strftime('%Y-%m-%d', at / 1000, 'unixepoch')",
  model: 'model',
  key: 'key_id',
};
const ADDED = `kind IN (${CREDITING_KINDS.map((kind) => `'${kind}'`).join(', ')})`;

function where(filter: UsageFilter): { sql: string; params: unknown[] } {
  const clauses = ['wallet = ?'];
  const params: unknown[] = [filter.wallet];
  if (filter.from !== undefined) (clauses.push('at >= ?'), params.push(filter.from));
  if (filter.to !== undefined) (clauses.push('at < ?'), params.push(filter.to));
  if (filter.kind !== undefined) (clauses.push('kind = ?'), params.push(filter.kind));
  if (filter.keyId !== undefined) (clauses.push('key_id = ?'), params.push(filter.keyId));
  return { sql: clauses.join(' AND '), params };
}

export function sqliteUsageHistory(db: SqliteConnection): UsageHistory {
  return {
    async page(filter: UsageFilter, limit: number, after?: UsageCursor) {
      const { sql, params } = where(filter);
      const cursor = after ? ' AND (at < ? OR (at = ? AND seq < ?))' : '';
      const rows = await db.all<UsageRow & { seq: number }>(
        `SELECT * FROM usage_records WHERE ${sql}${cursor} ORDER BY at DESC, seq DESC LIMIT ?`,
        [...params, ...(after ? [after.at, after.at, after.seq] : []), limit + 1],
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        records: page.map(usageRecordFromRow),
        ...(rows.length > limit && last ? { next: { at: last.at, seq: last.seq } } : {}),
      };
    },
    async totals(filter: UsageFilter, by: UsageGrouping): Promise<UsageTotal[]> {
      const { sql, params } = where(filter);
      const group = GROUP_COLUMN[by];
      const order = by === 'day' ? '"group" DESC' : 'spent DESC, added DESC, "group"';
      return db.all<UsageTotal>(
        `SELECT ${group} AS "group", count(*) AS records,
           coalesce(sum(CASE WHEN ${ADDED} THEN 0 ELSE credits END), 0) AS spent,
           coalesce(sum(CASE WHEN ${ADDED} THEN credits ELSE 0 END), 0) AS added,
           coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens
         FROM usage_records WHERE ${sql} GROUP BY 1 ORDER BY ${order}`,
        params,
      );
    },
    async sweep(before: number) {
      // In slices, yielding between them: the driver is synchronous, and one huge DELETE would hold the event loop.
      let swept = 0;
      for (;;) {
        const rows = await db.all<{ seq: number }>('SELECT seq FROM usage_records WHERE at < ? LIMIT ?', [before, SWEEP_SLICE]);
        if (rows.length === 0) return swept;
        await db.run(
          `DELETE FROM usage_records WHERE seq IN (${rows.map(() => '?').join(', ')})`,
          rows.map((row) => row.seq),
        );
        swept += rows.length;
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
