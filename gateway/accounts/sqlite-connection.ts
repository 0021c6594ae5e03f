/**
 * A promise-shaped SQLite connection (the `sqlite3` driver @keyv/sqlite already uses), for the
 * parts of the store that need what Keyv lacks: several rows changed in one transaction.
 *
 * @example
 *   const db = await openSqlite('./data/switchyard.sqlite')
 *   await db.run('INSERT INTO t(a) VALUES (?)', [1])
 *   const rows = await db.all<{ a: number }>('SELECT a FROM t')
 */
import sqlite3 from 'sqlite3';

export interface SqliteConnection {
  run(sql: string, params?: unknown[]): Promise<void>;
  all<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Statements without parameters, separated by `;`. */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

export async function openSqlite(file: string): Promise<SqliteConnection> {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const opened: sqlite3.Database = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(opened)));
  });
  const connection: SqliteConnection = {
    run: (sql, params = []) => new Promise((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve()))),
    all: <Row>(sql: string, params: unknown[] = []) =>
      new Promise<Row[]>((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as Row[])))),
    exec: (sql) => new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve()))),
    close: () => new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve()))),
  };
  // The same settings as the Keyv connection (store.ts): WAL, and no fsync per commit. A crash of
  // this process loses nothing committed; `synchronous` is per connection, so it is set here too.
  await connection.exec('PRAGMA busy_timeout=5000; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL');
  return connection;
}
