/**
 * One gateway process owns a DATA_DIR: Keyv over SQLite has no compare-and-set, so two writers
 * would lose ledger updates. The lock is a file holding the owner's pid; a lock whose pid is no
 * longer running (a crash) is taken over.
 *
 * @example
 *   const lock = acquireDataDirLock('./data')   // throws DataDirLocked when a live process holds it
 *   …
 *   lock.release()
 */
import { mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

export const LOCK_FILE = 'gateway.lock';

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

interface LockContent {
  pid: number;
  token: string;
  started_at: string;
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
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockContent>;
    if (typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) && parsed.pid > 0) {
      return { pid: parsed.pid, token: String(parsed.token ?? ''), started_at: String(parsed.started_at ?? '') };
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  }
  // Unreadable or half-written content: treat as a lock of a dead process.
  return { pid: 0, token: '', started_at: '' };
}

/** The pid of the live process holding `dataDir`, or undefined when nobody does. */
export function lockHolder(dataDir: string): number | undefined {
  const content = readLock(join(dataDir, LOCK_FILE));
  return content && content.pid > 0 && isRunning(content.pid) ? content.pid : undefined;
}

/** Take the lock on `dataDir` (created if missing) or throw DataDirLocked. */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const mine: LockContent = { pid: process.pid, token: randomBytes(12).toString('hex'), started_at: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(mine));
      } finally {
        closeSync(fd);
      }
      return lockHandle(path, mine.token);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLock(path);
    if (holder === undefined) continue; // released between our two steps: try again
    // Same pid counts as held: a second gateway inside this process must refuse too.
    if (holder.pid > 0 && isRunning(holder.pid)) throw new DataDirLocked(dataDir, holder.pid);
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
    if (moved && moved.token !== holder.token && moved.pid > 0 && isRunning(moved.pid)) {
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
      if (readLock(path)?.token === token) unlinkSync(path);
    },
  };
}
