/**
 * One process owns a DATA_DIR: a second gateway (in-process and as the built process) refuses
 * with a clear message, a stale lock of a dead pid is taken over, and the credits CLI writes the
 * store directly when nobody holds it or goes through the running gateway's admin API — without
 * losing a grant while 200-way spending runs. Child processes run from dist/ (npm run build).
 */
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../../gateway/config.js';
import { startGateway } from '../../../gateway/server.js';
import { acquireDataDirLock, DataDirLocked, LOCK_FILE, lockHolder, processStartTime } from '../../../gateway/storage/data-dir-lock.js';
import { baseConfigJson } from '../../helpers/gateway.js';
import { GatewayError } from '../../../gateway/errors.js';
import { ADMIN_TOKEN, ALICE, startAccountsGateway } from '../../helpers/accounts.js';

const run = promisify(execFile);
const CLI = resolve('dist/gateway/cli/credits-main.js');
const MAIN = resolve('dist/gateway/main.js');
const alice = ALICE.address.toLowerCase();
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-lock-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Child env: only what the CLI/gateway needs (coverage dir passes through when c8 runs us). */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...extra };
  if (process.env.NODE_V8_COVERAGE) env.NODE_V8_COVERAGE = process.env.NODE_V8_COVERAGE;
  return env;
}

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: childEnv(env), timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the DATA_DIR lock', () => {
  test('a second gateway on the same DATA_DIR refuses to start, naming the owner', async () => {
    const dataDir = tempDir();
    const first = await startAccountsGateway({ dataDir });
    try {
      const config = parseConfig(baseConfigJson(), { DATA_DIR: dataDir });
      await assert.rejects(startGateway(config, {}, { logDestination: { write: () => {} } }), (err: unknown) => {
        assert.ok(err instanceof DataDirLocked);
        assert.equal(
          err.message,
          `DATA_DIR ${resolve(dataDir)} is in use by another Switchyard process (pid ${process.pid}). ` +
            'Only one gateway may own a data directory; stop it or use another DATA_DIR.',
        );
        return true;
      });
      // The refused start did not disturb the owner's lock.
      assert.equal(lockHolder(dataDir), process.pid);
    } finally {
      await first.stop();
    }
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'the lock is removed at shutdown');
  });

  test('the built gateway process exits 1 with the message when the lock is held', async () => {
    assert.ok(existsSync(MAIN), 'run npm run build first');
    const dataDir = tempDir();
    const lock = acquireDataDirLock(dataDir);
    try {
      const child = spawn(process.execPath, [MAIN], { env: childEnv({ DATA_DIR: dataDir, PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise<number | null>((done) => child.on('exit', done));
      assert.equal(code, 1);
      assert.match(
        stderr,
        new RegExp(`switchyard: failed to start: DATA_DIR .* is in use by another Switchyard process \\(pid ${process.pid}\\)`),
      );
    } finally {
      lock.release();
    }
  });

  test('a stale lock whose pid is dead is taken over', async () => {
    const dataDir = tempDir();
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid;
    writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: dead, token: 'old', started_at: '2020-01-01T00:00:00Z' }));
    assert.equal(lockHolder(dataDir), undefined);
    const gw = await startAccountsGateway({ dataDir });
    try {
      assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, process.pid);
    } finally {
      await gw.stop();
    }
    // Garbage in the lock file counts as stale too.
    writeFileSync(join(dataDir, LOCK_FILE), 'not json');
    const lock = acquireDataDirLock(dataDir);
    lock.release();
    lock.release();
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false);
  });

  test("a lock naming this very pid but another start time (a restarted container's pid 1) is taken over", () => {
    const dataDir = tempDir();
    const ours = processStartTime(process.pid);
    assert.ok(ours, 'this test needs /proc');
    writeFileSync(
      join(dataDir, LOCK_FILE),
      JSON.stringify({ pid: process.pid, token: 'old', started_at: '2020-01-01T00:00:00Z', start_time: String(Number(ours) - 1) }),
    );
    assert.equal(lockHolder(dataDir), undefined);
    const lock = acquireDataDirLock(dataDir);
    try {
      assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).start_time, ours);
    } finally {
      lock.release();
    }
  });

  test('a lock written before the last reboot is taken over even if its pid runs again', () => {
    const dataDir = tempDir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      writeFileSync(
        join(dataDir, LOCK_FILE),
        JSON.stringify({ pid: child.pid, token: 'old', boot_id: 'another-boot', start_time: processStartTime(child.pid!) }),
      );
      assert.equal(lockHolder(dataDir), undefined);
      acquireDataDirLock(dataDir).release();
    } finally {
      child.kill();
    }
  });

  test('a lock held by another live gateway process is refused, and stays its own', async () => {
    const dataDir = tempDir();
    const lockModule = resolve('gateway/storage/data-dir-lock.ts');
    const holder = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { acquireDataDirLock } = await import(${JSON.stringify(lockModule)}); acquireDataDirLock(${JSON.stringify(dataDir)}); console.log('held'); setTimeout(() => {}, 60_000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((done) => holder.stdout.once('data', () => done()));
      assert.equal(lockHolder(dataDir), holder.pid);
      assert.throws(
        () => acquireDataDirLock(dataDir),
        (err: unknown) => err instanceof DataDirLocked && err.pid === holder.pid,
      );
      assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, holder.pid);
    } finally {
      holder.kill();
    }
  });
});

describe('npm run credits', () => {
  test('with no gateway running it writes the store directly; the gateway then sees it', async () => {
    const dataDir = tempDir();
    const granted = await cli(['grant', ALICE.address, '7'], { DATA_DIR: dataDir });
    assert.equal(granted.code, 0, granted.stderr);
    assert.deepEqual(JSON.parse(granted.stdout), { address: alice, credits: 7, total_deposited: 7, total_spent: 0, granted: 7 });
    const balance = await cli(['balance', alice], { DATA_DIR: dataDir });
    assert.deepEqual(JSON.parse(balance.stdout), { address: alice, credits: 7, total_deposited: 7, total_spent: 0 });
    const usage = await cli(['usage', alice], { DATA_DIR: dataDir });
    assert.equal(usage.code, 0, usage.stderr);
    const listed = JSON.parse(usage.stdout);
    assert.deepEqual(
      listed.data.map((r: { kind: string; credits: number }) => [r.kind, r.credits]),
      [['grant', 7]],
    );
    assert.match(listed.data[0].source_id, /^cli-/, "the grant's record names the CLI run's idempotency key");
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'the CLI lets go of the lock');
    const gw = await startAccountsGateway({ dataDir });
    try {
      assert.equal((await gw.ledger.balance(alice)).credits, 7);
    } finally {
      await gw.stop();
    }
  });

  test('two runs at once without ADMIN_TOKEN: the second waits for the first to let go of the lock', async () => {
    const dataDir = tempDir();
    const runs = await Promise.all([cli(['grant', alice, '3'], { DATA_DIR: dataDir }), cli(['grant', alice, '4'], { DATA_DIR: dataDir })]);
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const balance = await cli(['balance', alice], { DATA_DIR: dataDir });
    assert.deepEqual(JSON.parse(balance.stdout), { address: alice, credits: 7, total_deposited: 7, total_spent: 0 });
  });

  test('bad arguments exit 1 with a message', async () => {
    const dataDir = tempDir();
    const cases: Array<[string[], RegExp]> = [
      [[], /^usage: npm run credits -- grant <address> <amount>/],
      [['grant', '0x1234', '5'], /^credits: "0x1234" is not a wallet address/],
      [['grant', alice, '0'], /^credits: amount must be a whole number from 1 to 1000000000000, got "0"\./],
      [['grant', alice, '2.5'], /amount must be a whole number/],
      [['balance', alice, '3'], /^usage:/],
      [['usage', alice, '--colour', 'red'], /^usage:/],
      [['usage', alice, '--kind'], /^usage:/],
      [['usage', alice, '--kind', 'lunch'], /^credits: .*kind/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(args, { DATA_DIR: dataDir });
      assert.equal(result.code, 1, args.join(' '));
      assert.match(result.stderr, message);
    }
  });

  test('with a gateway running but no ADMIN_TOKEN it says what to set', async () => {
    const dataDir = tempDir();
    const gw = await startAccountsGateway({ dataDir });
    try {
      const result = await cli(['grant', alice, '5'], { DATA_DIR: dataDir, PORT: new URL(gw.url).port });
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr.trim(),
        `credits: a gateway (pid ${process.pid}) owns ${dataDir}; set ADMIN_TOKEN so the CLI can use its admin API.`,
      );
    } finally {
      await gw.stop();
    }
  });

  test('with a gateway running it goes through the admin API: no grant lost during 200-way spending', async () => {
    const dataDir = tempDir();
    const gw = await startAccountsGateway({ dataDir });
    try {
      const wallet = '0x' + '9'.repeat(40);
      await gw.ledger.grant(wallet, 50);
      const env = { DATA_DIR: dataDir, PORT: new URL(gw.url).port, HOST: '127.0.0.1', ADMIN_TOKEN };
      let clisDone = false;
      const grants = Promise.all([1, 2, 3].map(() => cli(['grant', wallet, '10'], env))).finally(() => (clisDone = true));
      let succeeded = 0;
      let refused = 0;
      // 200 workers keep spending 1 credit at a time until every CLI grant has landed.
      const spend = async () => {
        do {
          try {
            await gw.ledger.settle(await gw.ledger.reserve(wallet, 1), 1);
            succeeded++;
          } catch (err) {
            if (!(err instanceof GatewayError) || err.code !== 'insufficient_credits') throw err;
            refused++;
            await new Promise((r) => setTimeout(r, 5));
          }
        } while (!clisDone);
      };
      await Promise.all(Array.from({ length: 200 }, spend));
      for (const result of await grants) {
        assert.equal(result.code, 0, result.stderr);
        // The same shape as in direct mode.
        assert.deepEqual(Object.keys(JSON.parse(result.stdout)), ['address', 'credits', 'total_deposited', 'total_spent', 'granted']);
        assert.equal(JSON.parse(result.stdout).granted, 10);
      }
      const final = await gw.ledger.balance(wallet);
      assert.equal(final.total_deposited, 80, 'every grant landed');
      assert.equal(final.total_spent, succeeded);
      assert.equal(final.credits + final.total_spent, 80, 'nothing held, nothing lost');
      assert.ok(succeeded >= 50 && refused > 0, `succeeded ${succeeded}, refused ${refused}`);
      const viaApi = await cli(['balance', wallet], env);
      assert.deepEqual(JSON.parse(viaApi.stdout), final);
      // usage goes through GET /admin/credits/:address/usage: the grants, with the CLI's idempotency keys.
      const usage = await cli(['usage', wallet, '--kind', 'grant', '--group-by', 'day'], env);
      assert.equal(usage.code, 0, usage.stderr);
      assert.deepEqual(
        JSON.parse(usage.stdout).data.map((t: { records: number; added: number }) => [t.records, t.added]),
        [[4, 80]],
      );
      const badLimit = await cli(['usage', wallet, '--limit', '0'], env);
      assert.equal(badLimit.code, 1);
      assert.match(badLimit.stderr, /^credits: the gateway answered 400: /);
    } finally {
      await gw.stop();
    }
  });

  test('one Idempotency-Key for the whole run: a gateway that answers only after the CLI retried sees the same key', async () => {
    const dataDir = tempDir();
    const lock = acquireDataDirLock(dataDir); // "a gateway" owns DATA_DIR: this process
    const keys: string[] = [];
    // Drops the first four requests (more than one round of the CLI's attempts), then answers.
    const fake = createServer((req, res) => {
      keys.push(String(req.headers['idempotency-key']));
      if (keys.length <= 4) {
        req.socket.destroy();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ address: alice, credits: 5, total_deposited: 5, total_spent: 0, granted: 5, extra: 'not printed' }));
    });
    await new Promise<void>((done) => fake.listen(0, '127.0.0.1', done));
    try {
      const port = String((fake.address() as AddressInfo).port);
      const result = await cli(['grant', alice, '5'], { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: port, ADMIN_TOKEN });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(JSON.parse(result.stdout), { address: alice, credits: 5, total_deposited: 5, total_spent: 0, granted: 5 });
      assert.equal(keys.length, 5);
      assert.match(keys[0], /^cli-[0-9a-f-]{36}$/);
      assert.deepEqual(new Set(keys), new Set([keys[0]]), 'every attempt carries the same key');
    } finally {
      fake.close();
      lock.release();
    }
  });
});
