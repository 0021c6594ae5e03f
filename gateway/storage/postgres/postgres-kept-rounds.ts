/**
 * Kept chat rounds in PostgreSQL (cluster mode without REDIS_URL): one row per kept answer,
 * written with its expiry, read only while it lives, and deleted by a sweep every
 * `sweepIntervalMs` (every instance runs one; a delete of expired rows is idempotent). Bounded:
 * each put then deletes the oldest live rows beyond `maxBytes` of values in all (sizes read from
 * the row headers, `octet_length`, without reading the values), so callers rotating wallet
 * headers cannot fill the database.
 * Unreachable → StoreUnavailable, which the chat loop logs and goes on without.
 *
 * @example
 *   const store = new PostgresKeptRounds(db.sql, { maxBytes: 64 * 1024 * 1024, onSweepError: (err) => logger.error({ err }) })
 *   store.start()
 *   await store.put(key, json, 3_600_000)
 *   await store.stop()
 */
import type { KeptRoundsStore } from '../../chat/kept-rounds.js';
import { guarded, type Sql } from './database.js';

/** Expired rows are never read, so the sweep only bounds the table's size. */
const SWEEP_INTERVAL_MS = 60_000;

export class PostgresKeptRounds implements KeptRoundsStore {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly sql: Sql,
    /** `maxBytes`: the values held at most (`chat.keptRoundsMaxChars`). */
    private readonly options: { maxBytes: number; sweepIntervalMs?: number; onSweepError?: (err: unknown) => void },
  ) {}

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    const expiresAt = Date.now() + ttlMs;
    await guarded(
      () => this.sql`
      insert into kept_rounds (key, value, expires_at) values (${key}, ${value}, ${expiresAt}::bigint)
      on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at`,
    );
    // Newest first: a row goes once the rows newer than it and itself hold more than the bound.
    await guarded(
      () => this.sql`
      delete from kept_rounds where key in (
        select key from (
          select key, sum(octet_length(value)) over (order by expires_at desc, key) as held
          from kept_rounds where expires_at > ${Date.now()}::bigint
        ) newest_first where held > ${this.options.maxBytes}::bigint)`,
    );
  }

  async getMany(keys: string[]): Promise<Array<string | undefined>> {
    if (keys.length === 0) return [];
    const rows = await guarded(
      () => this.sql<Array<{ key: string; value: string }>>`
      select key, value from kept_rounds where key = any(${keys}::text[]) and expires_at > ${Date.now()}::bigint`,
    );
    const byKey = new Map(rows.map((row) => [row.key, row.value]));
    return keys.map((key) => byKey.get(key));
  }

  /** Delete every expired row; the number deleted. */
  async sweep(): Promise<number> {
    const result = await guarded(() => this.sql`delete from kept_rounds where expires_at <= ${Date.now()}::bigint`);
    return result.count;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep()
        .then(() => undefined)
        .catch((err: unknown) => this.options.onSweepError?.(err))
        .finally(() => (this.sweeping = undefined));
    }, this.options.sweepIntervalMs ?? SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }
}
