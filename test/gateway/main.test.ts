/**
 * The built gateway started exactly as `npm start` runs it: serves, shuts down gracefully on
 * SIGTERM with a request in flight (first draining: /health 503 `draining` while still serving),
 * and refuses bad config with exit 1 naming the field.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WALLET } from '../helpers/gateway.js';
import { spawnBuiltGateway, startBuiltGateway, waitForLogLine, type BuiltGateway } from './spawn-built-gateway.js';

const started: BuiltGateway[] = [];
const tempDir = mkdtempSync(join(tmpdir(), 'switchyard-config-'));
after(async () => {
  await Promise.all(started.map((g) => g.cleanup()));
  rmSync(tempDir, { recursive: true, force: true });
});

// One built gateway serves the first test and is shut down by the second (starting one spawns
// the four tool servers, which takes seconds on a busy machine).
let gateway: BuiltGateway & { url: string };

test('the built gateway with the shipped config serves /health and /v1/models', async () => {
  // Free mode (an env override of the shipped file) lets a wallet header alone list the models.
  gateway = await startBuiltGateway({ FREE_MODE: 'true', DRAIN_DELAY_MS: '1500' });
  started.push(gateway);

  const health = await fetch(`${gateway.url}/health`);
  assert.equal(health.status, 200);
  const body = (await health.json()) as { status: string; model: string; uptime: number };
  assert.ok(['ok', 'degraded'].includes(body.status), `status ${body.status}`);
  assert.equal(body.model, 'svc-32b-conductor');
  assert.equal(typeof body.uptime, 'number');

  const models = await fetch(`${gateway.url}/v1/models`, { headers: { 'x-wallet-address': WALLET } });
  assert.equal(models.status, 200);
  const list = (await models.json()) as { object: string; data: Array<{ id: string; aliases: string[] }> };
  assert.equal(list.object, 'list');
  assert.deepEqual(
    list.data.map((m) => [m.id, m.aliases]),
    [
      ['svc-32b-conductor', ['conductor']],
      ['svc-8b-operator', ['operator']],
    ],
  );
});

/** Resolves true once a TCP connect to `port` is refused (the listener is closed). */
async function connectionRefused(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

test('SIGTERM: draining first (health 503, requests served), then an in-flight request still completes, new connections are refused, exit 0', async () => {
  assert.ok(gateway, 'started by the previous test');
  const port = Number(new URL(gateway.url).port);

  // A chunked upload that is still sending holds the request in flight for as long as we like.
  // `Expect: 100-continue` tells us the gateway has accepted the request before we signal.
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'x-wallet-address': WALLET, 'content-type': 'application/json', expect: '100-continue' },
  });
  const response = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.once('error', reject);
  });
  await new Promise<void>((resolve) => req.once('continue', () => resolve()));
  req.write('{"held":');

  const signalledAt = Date.now();
  gateway.child.kill('SIGTERM');
  await waitForLogLine(gateway, (l) => l.msg === 'shutting down' && l.signal === 'SIGTERM' && l.drainDelayMs === 1500);
  // During the drain delay the listener stays open: the balancer's probe sees 503 `draining`,
  // and a request that still arrives is served (its connection then closes).
  const health = await fetch(`${gateway.url}/health`);
  assert.equal(health.status, 503);
  assert.equal(((await health.json()) as { status: string }).status, 'draining');
  assert.equal(health.headers.get('connection'), 'close');
  const models = await fetch(`${gateway.url}/v1/models`, { headers: { 'x-wallet-address': WALLET } });
  assert.equal(models.status, 200);
  assert.ok(Date.now() - signalledAt < 1_500, 'both answered within the drain delay');
  assert.equal(await connectionRefused(port, 6_000), true, 'new connections are refused after the drain delay');
  assert.ok(Date.now() - signalledAt >= 1_400, `not before the delay (${Date.now() - signalledAt} ms)`);
  assert.equal(gateway.child.exitCode, null, 'the gateway waits for the in-flight request');

  req.end('true}');
  const done = await response;
  // The request ran to its real answer: the body was parsed and the chat schema refused it.
  assert.equal(done.status, 400);
  assert.equal((JSON.parse(done.body) as { error: { param: string } }).error.param, 'messages');
  assert.equal(done.connection, 'close');

  assert.equal(await gateway.exited, 0);
  assert.ok(gateway.stdout().includes('"msg":"shut down cleanly"'));
});

test('SIGTERM during start-up (twice, as timeout(1) sends it): start-up finishes, everything closes, exit 0', async () => {
  // An upstream that takes the start-up probe and never answers holds start-up (for the probe's
  // 2 s timeout) after the tool servers are spawned: the window where a signal used to kill the
  // process and leave its children and its DATA_DIR lock behind.
  let probed!: () => void;
  const probeSeen = new Promise<void>((resolve) => (probed = resolve));
  const held: ServerResponse[] = [];
  const upstream = createServer((_req, res) => {
    held.push(res);
    probed();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const gateway = spawnBuiltGateway({ UPSTREAM_BASE_URL: upstreamUrl });
  started.push(gateway);
  try {
    await probeSeen;
    assert.ok(!gateway.stdout().includes('"msg":"gateway listening"'), 'still starting');
    gateway.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    gateway.child.kill('SIGTERM'); // the same request again: not "exit now"
    assert.equal(await gateway.exited, 0, gateway.stderr());
    const lines = gateway
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'));
    assert.ok(lines.some((l) => l.msg === 'shut down cleanly'));
    assert.ok(!lines.some((l) => l.msg === 'second signal: exiting without waiting'));
    assert.equal(existsSync(join(gateway.dataDir, 'gateway.lock')), false, 'the lock is released');
    const children = lines.filter((l) => l.msg === 'tool server up').map((l) => Number(l.pid));
    assert.equal(children.length, 4);
    for (const pid of children) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `tool server ${pid} still runs`);
  } finally {
    for (const res of held) res.destroy();
    upstream.close();
  }
});

/** Run the built gateway with a config file and env; it must exit 1 and say why on stderr. */
async function expectConfigFailure(fileJson: unknown, env: Record<string, string>): Promise<string> {
  const path = join(tempDir, `config-${started.length}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, typeof fileJson === 'string' ? fileJson : JSON.stringify(fileJson));
  const gateway = spawnBuiltGateway({ SWITCHYARD_CONFIG: path, ...env });
  started.push(gateway);
  assert.equal(await gateway.exited, 1, `stdout: ${gateway.stdout()}`);
  return gateway.stderr();
}

const validFile = {
  models: [{ id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } }],
};

test('bad config stops the built gateway with exit code 1 and names the field', async () => {
  const [port, freeMode, missingModels, notJson, badLimit, unknownKey, missingFile] = await Promise.all([
    expectConfigFailure(validFile, { PORT: 'abc' }),
    expectConfigFailure(validFile, { FREE_MODE: 'maybe' }),
    expectConfigFailure({ server: { port: 0 } }, {}),
    expectConfigFailure('{"models": [', {}),
    expectConfigFailure({ ...validFile, limits: { perIp: { points: 0, durationSec: 60 } } }, {}),
    expectConfigFailure({ ...validFile, colour: 'blue' }, {}),
    (async () => {
      const gateway = spawnBuiltGateway({ SWITCHYARD_CONFIG: join(tempDir, 'nope.json') });
      started.push(gateway);
      assert.equal(await gateway.exited, 1);
      return gateway.stderr();
    })(),
  ]);
  assert.equal(port, 'switchyard: config: PORT must be a whole number, got "abc"\n');
  assert.equal(freeMode, 'switchyard: config: FREE_MODE must be true or false, got "maybe"\n');
  assert.match(missingModels, /^switchyard: config: models: /);
  assert.match(notJson, /^switchyard: config: .*config-.*\.json is not valid JSON: /);
  assert.match(badLimit, /^switchyard: config: limits\.perIp\.points: /);
  assert.match(unknownKey, /^switchyard: config: \(root\): .*"colour"/);
  assert.match(missingFile, /^switchyard: config: cannot read .*nope\.json: ENOENT/);
});
