/**
 * scripts/build.mjs, the build that `npm ci`, `npm start`, `npm run credits` and `npm test` run
 * first: a build whose stamp matches its inputs is left alone, a changed input rebuilds it once,
 * starts that find it stale wait for the one building it, and a lock whose owner died is taken
 * over. Each test works on its own copy in a temporary directory, never on this checkout's dist/:
 * a small fixture project whose compile step records each run (and can be held, or made to
 * fail), and once the real tree, started three times at once with `npm start`.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, waitForLogLine, type BuiltGateway } from '../gateway/spawn-built-gateway.js';
import { waitFor } from '../gateway/tools/fixture-servers.js';

const BUILD_SCRIPT = join(REPO_ROOT, 'scripts/build.mjs');
const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
}

/**
 * A project with the real build script and a compile step that appends its pid to compiles.log,
 * waits while a file `hold` exists, fails while a file `fail` exists, and copies gateway/main.ts
 * to dist/gateway/main.js.
 */
function fixtureProject(): string {
  const dir = tempDir('switchyard-build-');
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'gateway'));
  cpSync(BUILD_SCRIPT, join(dir, 'scripts/build.mjs'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'build-fixture', private: true, type: 'module', scripts: { compile: 'node compile.mjs' } }),
  );
  writeFileSync(join(dir, 'gateway/main.ts'), 'export const version = 1;\n');
  writeFileSync(
    join(dir, 'compile.mjs'),
    [
      "import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';",
      "appendFileSync('compiles.log', `${process.pid}\\n`);",
      "while (existsSync('hold')) await new Promise((resolve) => setTimeout(resolve, 20));",
      "if (existsSync('fail')) process.exit(2);",
      "mkdirSync('dist/gateway', { recursive: true });",
      "writeFileSync('dist/gateway/main.js', readFileSync('gateway/main.ts'));",
    ].join('\n'),
  );
  return dir;
}

function compiles(dir: string): number {
  return existsSync(join(dir, 'compiles.log')) ? readFileSync(join(dir, 'compiles.log'), 'utf8').trim().split('\n').length : 0;
}

interface Run {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | string>;
}

/** `node scripts/build.mjs [args]` in `dir`, in its own process group (so a test can kill it with its compile step). */
function startBuild(dir: string, args: string[] = ['--if-stale']): Run {
  const child = spawn(process.execPath, ['scripts/build.mjs', ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, stderr: () => err, exited };
}

/** Run the script to its end: its exit code and what it said. */
async function build(dir: string, args?: string[]): Promise<{ code: number | string; stderr: string }> {
  const run = startBuild(dir, args);
  const code = await run.exited;
  return { code, stderr: run.stderr() };
}

describe('scripts/build.mjs on a fixture project', () => {
  test('a missing build is built once; a build whose stamp matches its inputs is left alone', async () => {
    const dir = fixtureProject();
    const first = await build(dir);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /dist\/ is missing or older than its sources: building it/);
    assert.equal(compiles(dir), 1);
    assert.match(readFileSync(join(dir, 'dist/.build-stamp'), 'utf8'), /^[0-9a-f]{64}\n$/);

    const again = await build(dir);
    assert.deepEqual(again, { code: 0, stderr: '' });
    assert.equal(compiles(dir), 1);
    // The stamp is a hash of contents, not a time: rewriting a source unchanged builds nothing.
    writeFileSync(join(dir, 'gateway/main.ts'), 'export const version = 1;\n');
    assert.deepEqual(await build(dir), { code: 0, stderr: '' });
    assert.equal(compiles(dir), 1);
  });

  test('a changed, added or removed source makes the build stale: it is rebuilt once', async () => {
    const dir = fixtureProject();
    assert.equal((await build(dir)).code, 0);
    writeFileSync(join(dir, 'gateway/main.ts'), 'export const version = 2;\n');
    const changed = await build(dir);
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stderr, /building it/);
    assert.equal(compiles(dir), 2);
    assert.equal(readFileSync(join(dir, 'dist/gateway/main.js'), 'utf8'), 'export const version = 2;\n');
    assert.deepEqual(await build(dir), { code: 0, stderr: '' });

    writeFileSync(join(dir, 'gateway/extra.ts'), 'export {};\n');
    assert.equal((await build(dir)).code, 0);
    assert.equal(compiles(dir), 3);
    rmSync(join(dir, 'gateway/extra.ts'));
    assert.equal((await build(dir)).code, 0);
    assert.equal(compiles(dir), 4);
    // package.json is an input too (the compile command, the dependencies' versions).
    appendFileSync(join(dir, 'package.json'), '\n');
    assert.equal((await build(dir)).code, 0);
    assert.equal(compiles(dir), 5);
    assert.deepEqual(await build(dir), { code: 0, stderr: '' });
  });

  test('`npm run build` (no --if-stale) always builds', async () => {
    const dir = fixtureProject();
    assert.equal((await build(dir)).code, 0);
    assert.equal((await build(dir, [])).code, 0);
    assert.equal(compiles(dir), 2);
  });

  test('a failed build leaves no stamp: the next start builds again', async () => {
    const dir = fixtureProject();
    assert.equal((await build(dir)).code, 0);
    writeFileSync(join(dir, 'gateway/main.ts'), 'export const version = 2;\n');
    writeFileSync(join(dir, 'fail'), '');
    const failed = await build(dir);
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /the build failed \(exit 2\)/);
    assert.doesNotMatch(failed.stderr, /devDependencies/, 'nothing is missing: no hint');
    assert.equal(existsSync(join(dir, 'dist/.build-stamp')), false);
    assert.equal(existsSync(join(dir, 'dist/.build-lock')), false, 'the lock is released');
    rmSync(join(dir, 'fail'));
    assert.equal((await build(dir)).code, 0);
    assert.equal(compiles(dir), 3);
    assert.deepEqual(await build(dir), { code: 0, stderr: '' });
  });

  test('a build that fails where the devDependencies were not installed (npm ci --omit=dev) says so', async () => {
    const dir = fixtureProject();
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ ...manifest, devDependencies: { typescript: '^7.0.2', esbuild: '^0.28.2' } }),
    );
    writeFileSync(join(dir, 'fail'), '');
    const failed = await build(dir);
    assert.equal(failed.code, 2);
    assert.match(
      failed.stderr,
      /it needs the devDependencies, and typescript, esbuild are not installed: install with them, or build once and ship dist\/ with its \.build-stamp/,
    );
  });

  test('a start that finds a build running waits for it, says so, and does not build again', async () => {
    const dir = fixtureProject();
    writeFileSync(join(dir, 'hold'), '');
    const first = startBuild(dir);
    await waitFor('the first build to compile', () => compiles(dir) === 1);
    const second = startBuild(dir);
    await waitFor('the second start to wait', () =>
      second.stderr().includes(`waiting for pid ${first.child.pid}, which is building dist/`),
    );
    rmSync(join(dir, 'hold'));
    assert.equal(await first.exited, 0, first.stderr());
    assert.equal(await second.exited, 0, second.stderr());
    assert.match(second.stderr(), new RegExp(`dist/ was built meanwhile by pid ${first.child.pid}: not building it again`));
    assert.equal(compiles(dir), 1);
    assert.equal(existsSync(join(dir, 'dist/.build-lock')), false);
  });

  test('a lock whose owner was killed mid-build is taken over by the start waiting on it, which builds', async () => {
    const dir = fixtureProject();
    writeFileSync(join(dir, 'hold'), '');
    const doomed = startBuild(dir);
    await waitFor('the first build to compile', () => compiles(dir) === 1);
    const waiting = startBuild(dir);
    await waitFor('the second start to wait', () => waiting.stderr().includes(`waiting for pid ${doomed.child.pid}`));
    // kill -9 of its whole group (the script, npm, the compile step): the lock file stays behind.
    process.kill(-doomed.child.pid!, 'SIGKILL');
    assert.equal(await doomed.exited, 'SIGKILL');
    rmSync(join(dir, 'hold'));
    assert.equal(await waiting.exited, 0, waiting.stderr());
    assert.match(waiting.stderr(), new RegExp(`took over the lock of pid ${doomed.child.pid}, which is gone`));
    assert.match(waiting.stderr(), /building it/);
    assert.equal(compiles(dir), 2);
    assert.equal(existsSync(join(dir, 'dist/.build-lock')), false);
    assert.deepEqual(await build(dir), { code: 0, stderr: '' });
  });

  test('a lock file left by a process that is gone, with nobody waiting on it, is taken over', async () => {
    const dir = fixtureProject();
    const gone = spawnSync(process.execPath, ['-e', '']);
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'dist/.build-lock'), JSON.stringify({ pid: gone.pid, token: 'gone' }));
    const run = await build(dir);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, new RegExp(`took over the lock of pid ${gone.pid}, which is gone`));
    assert.equal(compiles(dir), 1);
    assert.equal(existsSync(join(dir, 'dist/.build-lock')), false);
  });
});

/**
 * What the build reads (the compiler's top-level folders, read from tsconfig.build.json so a new one
 * cannot be forgotten here, and the playground), plus the config and scripts a start needs: the tree
 * without dist/, node_modules linked.
 */
function copyOfTree(): string {
  const dir = tempDir('switchyard-tree-');
  const compiled = (JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] }).include.map(
    (pattern) => pattern.split('/')[0],
  );
  for (const entry of new Set([...compiled, 'playground', 'config', 'scripts'])) {
    cpSync(join(REPO_ROOT, entry), join(dir, entry), { recursive: true });
  }
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(REPO_ROOT, file), join(dir, file));
  }
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** `npm start` in `dir` with its own PORT (0: any free one) and DATA_DIR, in its own process group. */
function npmStart(dir: string): BuiltGateway {
  const dataDir = tempDir('switchyard-start-data-');
  const child = spawn('npm', ['start'], {
    cwd: dir,
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    dataDir,
    async cleanup() {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-child.pid!, 'SIGKILL'); // npm, and the gateway it started
        await exited;
      }
    },
  };
}

describe('npm start on a copy of the tree without dist/', () => {
  test('three gateways started at once all come up; one builds, the others wait for it', { timeout: 900_000 }, async () => {
    const dir = copyOfTree();
    const starts = [npmStart(dir), npmStart(dir), npmStart(dir)];
    try {
      const lines = await Promise.all(starts.map((start) => waitForLogLine(start, (line) => line.msg === 'gateway listening', 840_000)));
      assert.equal(new Set(lines.map((line) => line.url)).size, 3, 'each listens on its own port');
      const said = starts.map((start) => start.stderr());
      assert.equal(said.filter((text) => text.includes('older than its sources: building it')).length, 1, said.join('\n---\n'));
      for (const text of said.filter((t) => !t.includes('older than its sources: building it'))) {
        assert.doesNotMatch(text, /> switchyard@[^\n]* compile/, 'a start that did not build ran no compiler');
      }
      for (const line of lines) assert.equal((await fetch(`${String(line.url)}/health`)).status, 200);
    } finally {
      await Promise.all(starts.map((start) => start.cleanup()));
    }
    // Built now: a start, and `npm run credits`, check the stamp and compile nothing.
    assert.deepEqual(await build(dir), { code: 0, stderr: '' });
    const credits = spawnSync('npm', ['run', 'credits', '--', 'balance', '0x' + 'ab'.repeat(20)], {
      cwd: dir,
      env: { ...process.env, DATA_DIR: tempDir('switchyard-credits-data-') },
      encoding: 'utf8',
    });
    assert.equal(credits.status, 0, credits.stderr);
    assert.doesNotMatch(credits.stderr + credits.stdout, /building|compile/);
  });
});
