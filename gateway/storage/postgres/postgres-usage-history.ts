/**
 * Usage records on PostgreSQL (cluster mode, migration 13): the PostgreSQL ledger writes each in
 * its step's transaction; this reads a wallet's, newest first, and sweeps the old ones (every
 * instance may sweep: a delete of what another deleted is a no-op).
 *
 * @example
 *   const history = new PostgresUsageHistory(db.sql)
 *   const { records, next } = await history.page({ wallet }, 50)
 */
import type { UsageCursor, UsageFilter, UsageGrouping, UsageHistory, UsagePage, UsageTotal } from '../../ledger/usage.js';
import { CREDITING_KINDS, usageRecordFromRow, type UsageRow } from '../usage-rows.js';
import { guarded, type Sql } from './database.js';

/** Records deleted per statement by a sweep, so no one statement holds many row locks. */
const SWEEP_SLICE = 5_000;

export class PostgresUsageHistory implements UsageHistory {
  constructor(private readonly sql: Sql) {}

  private where(filter: UsageFilter) {
    const { sql } = this;
    return sql`wallet = ${filter.wallet}
      ${filter.from !== undefined ? sql`and at >= ${filter.from}::bigint` : sql``}
      ${filter.to !== undefined ? sql`and at < ${filter.to}::bigint` : sql``}
      ${filter.kind !== undefined ? sql`and kind = ${filter.kind}` : sql``}
      ${filter.keyId !== undefined ? sql`and key_id = ${filter.keyId}` : sql``}`;
  }

  async page(filter: UsageFilter, limit: number, after?: UsageCursor): Promise<UsagePage> {
    const { sql } = this;
    const rows = await guarded(
      () => sql<Array<UsageRow & { seq: number }>>`
      select seq, id, at, kind, request_id, key_id, model, tools::text as tools, prompt_tokens, completion_tokens, credits, source_id
      from usage_records where ${this.where(filter)}
      ${after ? sql`and (at, seq) < (${after.at}::bigint, ${after.seq}::bigint)` : sql``}
      order by at desc, seq desc limit ${limit + 1}`,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      records: page.map(usageRecordFromRow),
      ...(rows.length > limit && last ? { next: { at: Number(last.at), seq: Number(last.seq) } } : {}),
    };
  }

  async totals(filter: UsageFilter, by: UsageGrouping): Promise<UsageTotal[]> {
    const { sql } = this;
    const group =
      by === 'day' ? sql`to_char(to_timestamp(at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')` : by === 'model' ? sql`model` : sql`key_id`;
    const order = by === 'day' ? sql`1 desc` : sql`3 desc, 4 desc, 1`;
    const added = sql`kind in ${sql([...CREDITING_KINDS])}`;
    const rows = await guarded(
      () => sql<UsageTotal[]>`
      select ${group} as "group", count(*)::bigint as records,
        coalesce(sum(case when ${added} then 0 else credits end), 0)::bigint as spent,
        coalesce(sum(case when ${added} then credits else 0 end), 0)::bigint as added,
        coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens, coalesce(sum(completion_tokens), 0)::bigint as completion_tokens
      from usage_records where ${this.where(filter)} group by 1 order by ${order}`,
    );
    return rows.map((row) => ({ ...row }));
  }

  async sweep(before: number): Promise<number> {
    let swept = 0;
    for (;;) {
      const result = await guarded(
        () => this.sql`
        delete from usage_records where seq in (select seq from usage_records where at < ${before}::bigint limit ${SWEEP_SLICE})`,
      );
      swept += result.count;
      if (result.count < SWEEP_SLICE) return swept;
    }
  }
}
