/**
 * A SQLite connection for the parts of the store that need what Keyv lacks: several rows changed
 * in one transaction. It uses better-sqlite3, which runs each statement synchronously on this
 * thread: a ledger commit is a few tens of microseconds, with no hop to the libuv thread pool and
 * back (the `sqlite3` driver behind @keyv/sqlite costs that hop on every statement, which is what
 * a charge at one connection waited for). Prepared statements are kept by their SQL text.
 *
 * @example
 *   const db = openSqlite('./data/switchyard.sqlite')
 *   await db.run('INSERT INTO t(a) VALUES (?)', [1])
 *   const rows = await db.all<{ a: number }>('SELECT a FROM t')
 */
import Database from 'better-sqlite3';

export interface SqliteConnection {
  run(sql: string, params?: unknown[]): Promise<void>;
  all<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Statements without parameters, separated by `;`. */
  exec(sql: string): Promise<void>;
  /**
   * Run statements as one transaction (BEGIN IMMEDIATE … COMMIT, ROLLBACK on error) in one
   * synchronous call: no other code of this process runs while it holds the write lock, so another
   * connection of this process (the deposit store's) can never busy-wait on it, which with a
   * synchronous driver would stall the event loop.
   */
  transaction(statements: Array<{ sql: string; params: unknown[] }>): Promise<void>;
  close(): Promise<void>;
}

/** Prepared statements kept per connection (the ledger's multi-row upserts vary by row count). */
const MAX_STATEMENTS = 1_000;

export async function openSqlite(file: string): Promise<SqliteConnection> {
  const db = new Database(file, { timeout: 5_000 });
  // The same settings as the Keyv connection (keyv-store.ts): WAL, and no fsync per commit. A crash of
  // this process loses nothing committed; `synchronous` is per connection, so it is set here too.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= MAX_STATEMENTS) statements.clear();
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  return {
    run: async (sql, params = []) => {
      prepared(sql).run(...params);
    },
    all: async <Row>(sql: string, params: unknown[] = []) => prepared(sql).all(...params) as Row[],
    exec: async (sql) => {
      db.exec(sql);
    },
    transaction: async (statements) => {
      db.transaction(() => {
        for (const { sql, params } of statements) prepared(sql).run(...params);
      }).immediate();
    },
    close: async () => {
      db.close();
    },
  };
}

/** Whether `db` has a table named `name` (an older or partly opened store may lack one). */
export async function hasTable(db: SqliteConnection, name: string): Promise<boolean> {
  return (await db.all(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, [name])).length > 0;
}
