/**
 * One watcher per chain across the cluster: each instance asks, before each pass, whether it
 * holds the chain's lease, a PostgreSQL session advisory lock taken on a connection this instance
 * opens for it alone. Whoever holds it scans; the others stand by and take over on their next pass
 * once it is free: its holder stopped (shutdown closes the connection) or died (PostgreSQL ends
 * the session, and with it the lock). Without it every instance scanned every chain, which was
 * safe (a deposit is credited once whoever sees it) but multiplied the RPC calls, which providers
 * bill, by the number of instances.
 *
 * The connection is its own, not one of the pool's: a session whose state is in doubt after an
 * error is closed, never handed back to hold a lock nobody knows about.
 *
 * @example
 *   const lease = new PostgresWatchLease(databaseUrl)
 *   if (await lease.holds(8453)) await scan()   // true on one instance at a time
 *   await lease.release()                        // at shutdown: another instance takes over
 */
import { openDatabase, guarded, type Database } from './database.js';
import type { WatchLease } from '../../deposits/deposit-watcher.js';

export class PostgresWatchLease implements WatchLease {
  private session: Promise<Database> | undefined;
  /** Chains whose lock this instance's session holds. */
  private readonly held = new Set<number>();
  /** The server process of the session that holds them: the client reconnects on its own, and a new session holds nothing. */
  private heldBy: number | undefined;

  constructor(private readonly databaseUrl: string) {}

  async holds(chainId: number): Promise<boolean> {
    try {
      this.session ??= openDatabase(this.databaseUrl, { max: 1 });
      const { sql } = await this.session;
      if (this.held.has(chainId)) {
        // The lock lives as long as the session that took it.
        const [{ pid }] = await guarded(() => sql<Array<{ pid: number }>>`select pg_backend_pid() as pid`);
        if (pid === this.heldBy) return true;
        this.held.clear();
      }
      const [row] = await guarded(
        () => sql<Array<{ locked: boolean; pid: number }>>`
        select pg_try_advisory_lock(hashtext('switchyard:deposit-watch'), hashtext(${String(chainId)})) as locked,
          pg_backend_pid() as pid`,
      );
      if (row.locked) {
        if (row.pid !== this.heldBy) this.held.clear();
        this.held.add(chainId);
        this.heldBy = row.pid;
      }
      return row.locked;
    } catch (err) {
      // The session is in doubt: close it (its locks go with it) and start over next time.
      await this.release();
      throw err;
    }
  }

  /** Let go of every chain (shutdown, or a failed session): another instance's next pass takes over. */
  async release(): Promise<void> {
    const session = this.session;
    const holding = this.held.size > 0;
    this.session = undefined;
    this.held.clear();
    this.heldBy = undefined;
    if (!session) return;
    try {
      const db = await session;
      // Unlocked before the close returns: a backend frees its locks only once it has exited,
      // a moment after the connection is gone, and the next holder should not wait for that.
      if (holding) await db.sql`select pg_advisory_unlock_all()`.catch(() => {});
      await db.close();
    } catch {
      // The session never opened: it holds nothing.
    }
  }
}
