/**
 * Graceful shutdown in-process: a request that outlives the grace period is aborted (signal and
 * socket), closers run afterwards in reverse order, and a failing closer does not stop the rest.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type ClientRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startTestGateway, walletHeaders } from '../helpers/gateway.js';
import { gracefulShutdown } from '../../gateway/shutdown.js';
import { createLogger } from '../../gateway/logger.js';

/** Start a chunked upload that never finishes; resolves once the server has accepted it. */
async function holdUpload(url: string): Promise<{ req: ClientRequest; outcome: Promise<string> }> {
  const req = request(`${url}/v1/chat/completions`, { method: 'POST', headers: walletHeaders(undefined, { expect: '100-continue' }) });
  const outcome = new Promise<string>((resolve) => {
    req.once('response', (res) => resolve(`response ${res.statusCode}`));
    req.once('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`));
  });
  await new Promise<void>((resolve) => req.once('continue', () => resolve()));
  req.write('{"never":');
  return { req, outcome };
}

test('a request still running when the grace period ends is aborted; then closers run, last first', async () => {
  const gateway = await startTestGateway({
    config: (json) => {
      json.server = { ...(json.server as object), shutdownGraceMs: 300 };
    },
  });
  const order: string[] = [];
  gateway.onClose(() => void order.push('first registered'));
  gateway.onClose(async () => {
    order.push(`second registered (aborted: ${gateway.shuttingDown.aborted})`);
  });
  const { outcome } = await holdUpload(gateway.url);

  const startedAt = Date.now();
  const closing = gateway.close();
  assert.equal(gateway.close(), closing, 'close() is idempotent');
  assert.equal(gateway.shuttingDown.aborted, false, 'not aborted while within the grace period');
  // New connections are refused at once.
  await assert.rejects(fetch(`${gateway.url}/health`), (err: Error & { cause?: { code?: string } }) => err.cause?.code === 'ECONNREFUSED');

  await closing;
  const elapsed = Date.now() - startedAt;
  assert.ok(elapsed >= 250, `waited for the grace period (${elapsed} ms)`);
  assert.ok(elapsed < 5_000, `but not much longer (${elapsed} ms)`);
  assert.equal(await outcome, 'error ECONNRESET');
  assert.equal(gateway.shuttingDown.aborted, true);
  assert.deepEqual(order, ['second registered (aborted: true)', 'first registered']);
  const warning = gateway.logs.find((l) => l.msg === 'shutdown grace period over: aborting in-flight requests');
  assert.equal(warning?.inFlight, 1);
  await gateway.stop();
});

test('with nothing in flight, close() is quick and never aborts', async () => {
  const gateway = await startTestGateway();
  // An idle keep-alive connection must not hold shutdown up.
  assert.equal((await fetch(`${gateway.url}/health`)).status, 200);
  const startedAt = Date.now();
  await gateway.stop();
  assert.ok(Date.now() - startedAt < 2_000);
  assert.equal(gateway.shuttingDown.aborted, false);
});

test('a failing closer is logged, the others still run, and close() rejects with all failures', async () => {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  const server = createServer((_req, res) => res.end('ok'));
  const shutdown = gracefulShutdown(server, { graceMs: 1_000, logger });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  assert.ok((server.address() as AddressInfo).port > 0);
  const ran: string[] = [];
  shutdown.onClose(() => void ran.push('store'));
  shutdown.onClose(() => {
    throw new Error('tool host would not stop');
  });
  shutdown.onClose(async () => void ran.push('upstreams'));
  await assert.rejects(shutdown.close(), (err: unknown) => {
    assert.ok(err instanceof AggregateError);
    assert.equal(err.message, '1 part(s) failed to close');
    assert.equal((err.errors[0] as Error).message, 'tool host would not stop');
    return true;
  });
  assert.deepEqual(ran, ['upstreams', 'store']);
  assert.equal(server.listening, false);
  const logged = lines.map((l) => JSON.parse(l) as { msg: string; err?: { message: string } });
  assert.equal(logged.find((l) => l.msg === 'a part failed to close')?.err?.message, 'tool host would not stop');
});

test('startGateway on a port already in use fails, and stops what it had started', async () => {
  const first = await startTestGateway();
  const port = Number(new URL(first.url).port);
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-inuse-'));
  await assert.rejects(
    startTestGateway({
      dataDir,
      config: (json) => {
        json.server = { ...(json.server as object), port };
      },
    }),
    (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE',
  );
  await first.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('drain: /health 503 `draining` and requests still served for the delay, then the listener closes', async () => {
  const gateway = await startTestGateway({
    config: (json) => {
      json.server = { ...(json.server as object), drainDelayMs: 400 };
    },
  });
  const startedAt = Date.now();
  const drained = gateway.drainAndClose();
  const health = await fetch(`${gateway.url}/health`);
  assert.equal(health.status, 503);
  assert.equal(((await health.json()) as { status: string }).status, 'draining');
  const models = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() });
  assert.equal(models.status, 200, 'other requests are still served');
  assert.equal(models.headers.get('connection'), 'close', 'and their connections end, so clients reconnect elsewhere');
  await drained;
  assert.ok(Date.now() - startedAt >= 390, `closed only after the delay (${Date.now() - startedAt} ms)`);
  await assert.rejects(fetch(`${gateway.url}/health`), (err: Error & { cause?: { code?: string } }) => err.cause?.code === 'ECONNREFUSED');
  await gateway.stop();
});
