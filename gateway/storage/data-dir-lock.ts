/**
 * One gateway process owns a DATA_DIR: the ledger's authority is in its memory and Keyv over
 * SQLite has no compare-and-set, so two writers would lose ledger and key updates. The lock is a
 * file naming its owner: pid, the kernel's boot id and the process's start time. A lock is stale
 * (and taken over) when that owner is gone: its pid is not running, the machine has rebooted
 * since, or the pid now belongs to a process started at another time. A pid alone is not enough:
 * after a crash in a container the restarted gateway is pid 1 again, exactly like the lock's dead
 * owner.
 *
 * @example
 *   const lock = acquireDataDirLock('./data')   // throws DataDirLocked when a live process holds it
 *   …
 *   lock.release()
 */
import { mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

export const LOCK_FILE = 'gateway.lock';

/**
 * Lock files held by this process. Two gateways in one process (tests, an embedding program)
 * share a pid and a start time, so only this set tells that the directory is taken here.
 */
const heldHere = new Set<string>();

export class DataDirLocked extends Error {
  readonly pid: number;
  constructor(dataDir: string, pid: number) {
    super(
      `DATA_DIR ${resolve(dataDir)} is in use by another Switchyard process (pid ${pid}). ` +
        'Only one gateway may own a data directory; stop it or use another DATA_DIR.',
    );
    this.name = 'DataDirLocked';
    this.pid = pid;
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Remove the lock file if it is still ours. Safe to call twice. */
  release(): void;
}

const lockContentSchema = z.object({
  pid: z.number().int().positive(),
  token: z.string().default(''),
  started_at: z.string().default(''),
  /** /proc/sys/kernel/random/boot_id when the lock was taken; absent where /proc is. */
  boot_id: z.string().optional(),
  /** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); absent where /proc is. */
  start_time: z.string().optional(),
});
type LockContent = z.infer<typeof lockContentSchema>;

/** Unreadable or half-written content: the lock of nobody alive. */
const GARBAGE: LockContent = { pid: 1, token: '', started_at: '', boot_id: 'unknown', start_time: 'unknown' };

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined; // no /proc (macOS, Windows) or the process is gone
  }
}

function bootId(): string | undefined {
  return readProc('/proc/sys/kernel/random/boot_id');
}

/** The start time of `pid` from /proc, or undefined where /proc is absent or pid is gone. */
export function processStartTime(pid: number): string | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // Field 2 (comm) is in parentheses and may hold spaces: count fields after its last ')'.
  // What follows starts at field 3, so field 22 is the 20th.
  return stat
    .slice(stat.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/)[19];
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(path: string): LockContent | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed = lockContentSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : GARBAGE;
  } catch {
    return GARBAGE;
  }
}

/**
 * Whether the process that wrote `lock` is still alive. Checked where the platform allows:
 * same boot, pid running, same start time. Our own pid outside `heldHere` is a previous
 * incarnation (a restarted container's pid 1), never us.
 */
function ownerAlive(lock: LockContent): boolean {
  if (lock === GARBAGE) return false;
  const boot = bootId();
  if (lock.boot_id !== undefined && boot !== undefined && lock.boot_id !== boot) return false;
  if (lock.pid === process.pid) return false;
  if (!isRunning(lock.pid)) return false;
  const started = processStartTime(lock.pid);
  return lock.start_time === undefined || started === undefined || lock.start_time === started;
}

/** The pid of the live process holding `dataDir`, or undefined when nobody does. */
export function lockHolder(dataDir: string): number | undefined {
  const path = resolve(dataDir, LOCK_FILE);
  if (heldHere.has(path)) return process.pid;
  const content = readLock(path);
  return content && ownerAlive(content) ? content.pid : undefined;
}

/** Take the lock on `dataDir` (created if missing) or throw DataDirLocked. */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = resolve(dataDir, LOCK_FILE);
  if (heldHere.has(path)) throw new DataDirLocked(dataDir, process.pid);
  const mine: LockContent = {
    pid: process.pid,
    token: randomBytes(12).toString('hex'),
    started_at: new Date().toISOString(),
    boot_id: bootId(),
    start_time: processStartTime(process.pid),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(mine));
      } finally {
        closeSync(fd);
      }
      heldHere.add(path);
      return lockHandle(path, mine.token);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLock(path);
    if (holder === undefined) continue; // released between our two steps: try again
    if (ownerAlive(holder)) throw new DataDirLocked(dataDir, holder.pid);
    // Stale. Move it aside atomically; if what we moved is not the stale lock we read (another
    // process took over first), put it back and give up.
    const aside = `${path}.stale-${process.pid}-${mine.token}`;
    try {
      renameSync(path, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const moved = readLock(aside);
    if (moved && moved.token !== holder.token && ownerAlive(moved)) {
      renameSync(aside, path);
      throw new DataDirLocked(dataDir, moved.pid);
    }
    unlinkSync(aside);
  }
  throw new Error(`Could not take the lock ${path}: it keeps changing.`);
}

function lockHandle(path: string, token: string): DataDirLock {
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      if (readLock(path)?.token === token) unlinkSync(path);
    },
  };
}
