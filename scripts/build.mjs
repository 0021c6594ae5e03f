/**
 * Builds dist/ under a lock and stamps it with a hash of the build's inputs, so a start compiles
 * nothing when dist/ is current and gateways started together from one checkout build it once.
 * A plain script: it runs before anything is compiled.
 *
 *   node scripts/build.mjs             build now (`npm run build`)
 *   node scripts/build.mjs --if-stale  build only when dist/ is missing or its stamp differs from
 *                                      the inputs' hash (prepare, prestart, precredits, pretest)
 *
 * The compiler commands are package.json's `compile` script. dist/.build-stamp is written only
 * after a build succeeds, from the inputs as they were when it began, and removed before a build
 * starts: an interrupted or failed build, or a source edited during one, leaves dist/ stale.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const LOCK = join(DIST, '.build-lock');
/** What the compile step reads: tsconfig.build.json's folders, the playground bundle, and the recipe (scripts, dependency versions). */
const INPUT_DIRS = ['gateway', 'chains', 'telemetry', 'tool-servers', 'playground'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'];
/** How often a waiting start looks at the lock again. */
const LOCK_POLL_MS = 100;

function say(text) {
  process.stderr.write(`switchyard build: ${text}\n`);
}

/** Every file under `dir`, recursively, as paths relative to ROOT (none when `dir` is absent). */
function filesUnder(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.isFile() ? [relative(ROOT, path)] : [];
  });
}

/** SHA-256 over the inputs' paths and contents, in a fixed order: a rename, an edit, a new or deleted file all change it. */
function inputsHash() {
  const files = [...INPUT_DIRS.flatMap((dir) => filesUnder(join(ROOT, dir))), ...INPUT_FILES].sort();
  const hash = createHash('sha256');
  for (const file of files) {
    let content;
    try {
      content = readFileSync(join(ROOT, file));
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
      continue; // an optional input (a fixture project has no lock file)
    }
    hash.update(`${file}\0${content.length}\0`);
    hash.update(content);
  }
  return hash.digest('hex');
}

function readStamp() {
  try {
    return readFileSync(STAMP, 'utf8').trim();
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  }
}

// The lock: dist/.build-lock names its owner (pid, boot id, the process's start time), like the
// gateway's DATA_DIR lock. It is created whole by hard-linking a written file into place (link
// fails if the name exists, as O_EXCL does), so nobody reads a lock half-written. A lock whose
// owner is gone (pid not running, another boot, or the pid reused by a process started later) is
// moved aside atomically and taken over.

function readProc(path) {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined; // no /proc (macOS), or the process is gone
  }
}

/** Field 22 of /proc/<pid>/stat, the start time in clock ticks since boot; after the comm field's last ')' it is the 20th. */
function startTime(pid) {
  const stat = readProc(`/proc/${pid}/stat`);
  return stat
    ?.slice(stat.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/)[19];
}

function readLock(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const lock = JSON.parse(text);
    return Number.isInteger(lock.pid) && lock.pid > 0 ? lock : { pid: 0 };
  } catch {
    return { pid: 0 }; // not a lock anyone alive wrote
  }
}

function ownerAlive(lock) {
  if (lock.pid <= 0 || lock.pid === process.pid) return false; // our own pid here is a previous incarnation (a container's pid 1)
  const boot = readProc('/proc/sys/kernel/random/boot_id');
  if (lock.boot_id && boot && lock.boot_id !== boot) return false;
  try {
    process.kill(lock.pid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false; // EPERM: running, as another user
  }
  const started = startTime(lock.pid);
  return !lock.start_time || !started || lock.start_time === started;
}

/** Take the lock, or return the live owner that holds it. */
function tryLock(mine) {
  const draft = `${LOCK}.${process.pid}-${mine.token}`;
  writeFileSync(draft, JSON.stringify(mine));
  try {
    for (;;) {
      try {
        linkSync(draft, LOCK);
        return undefined;
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
      }
      const holder = readLock(LOCK);
      if (holder === undefined) continue; // released meanwhile
      if (ownerAlive(holder)) return holder;
      const aside = `${LOCK}.stale-${process.pid}-${mine.token}`;
      try {
        renameSync(LOCK, aside);
      } catch (err) {
        if (err.code === 'ENOENT') continue; // someone else moved it first
        throw err;
      }
      const moved = readLock(aside);
      if (moved && moved.token !== holder.token && ownerAlive(moved)) {
        // Another start took the stale lock over between our read and our move: it is theirs.
        renameSync(aside, LOCK);
        return moved;
      }
      unlinkSync(aside);
      say(`took over ${holder.pid ? `the lock of pid ${holder.pid}, which is gone` : 'an unreadable lock'} (${relative(ROOT, LOCK)})`);
    }
  } finally {
    unlinkSync(draft);
  }
}

/** Wait for the lock, saying once whom we wait for; resolves with its release. */
async function acquireLock() {
  mkdirSync(DIST, { recursive: true });
  const mine = {
    pid: process.pid,
    token: randomBytes(12).toString('hex'),
    boot_id: readProc('/proc/sys/kernel/random/boot_id'),
    start_time: startTime(process.pid),
  };
  let waitingFor;
  for (;;) {
    const holder = tryLock(mine);
    if (holder === undefined) break;
    if (holder.pid !== waitingFor) say(`waiting for pid ${holder.pid}, which is building dist/ (${relative(ROOT, LOCK)})`);
    waitingFor = holder.pid;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
  return {
    waitedFor: waitingFor,
    release() {
      if (readLock(LOCK)?.token === mine.token) unlinkSync(LOCK);
    },
  };
}

/** package.json's devDependencies absent from node_modules (an install with --omit=dev). */
function missingDevDependencies() {
  const { devDependencies = {} } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return Object.keys(devDependencies).filter((name) => !existsSync(join(ROOT, 'node_modules', name, 'package.json')));
}

/** `npm run compile` with its output on stderr (a gateway's stdout carries its JSON log lines); resolves with the exit code. */
function compile() {
  // Under npm (a lifecycle script) npm_execpath is the running npm; otherwise the one on PATH.
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, 'run', 'compile']] : ['npm', ['run', 'compile']];
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 2, 2] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main() {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && readStamp() === inputsHash()) return 0;
  const lock = await acquireLock();
  try {
    const hash = inputsHash();
    if (ifStale && readStamp() === hash) {
      say(`dist/ was built meanwhile${lock.waitedFor ? ` by pid ${lock.waitedFor}` : ''}: not building it again`);
      return 0;
    }
    if (ifStale) say('dist/ is missing or older than its sources: building it');
    rmSync(STAMP, { force: true });
    const code = await compile();
    if (code !== 0) {
      say(`the build failed (exit ${code})`);
      const missing = missingDevDependencies();
      if (missing.length) {
        say(
          `it needs the devDependencies, and ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''} are not installed: ` +
            'install with them, or build once and ship dist/ with its .build-stamp',
        );
      }
      return code;
    }
    writeFileSync(STAMP, `${hash}\n`);
    return 0;
  } finally {
    lock.release();
  }
}

process.exitCode = await main();
