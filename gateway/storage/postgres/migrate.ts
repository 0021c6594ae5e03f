/**
 * Apply the schema migrations not yet applied, at start, under a transaction-scoped advisory
 * lock: instances starting together queue on the lock, and each migration is applied exactly
 * once (the later ones find it recorded in `schema_migrations` and skip it). DDL is
 * transactional in PostgreSQL, so a failing migration leaves nothing half-applied.
 *
 * @example
 *   const applied = await migrate(db.sql)   // [1, 2] the first time, [] afterwards
 */
import type { Sql } from './database.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** Any fixed 64-bit number, the same in every instance: "Switchyard migrations". */
const MIGRATION_LOCK = 0x5357_4d49_4752;

export async function migrate(sql: Sql, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`;
    const rows = await tx<Array<{ version: number }>>`select version from schema_migrations`;
    const done = new Set(rows.map((row) => row.version));
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.sql).simple();
      await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
      applied.push(migration.version);
    }
    return applied;
  });
}
