/**
 * With tracing off the gateway loads no OpenTelemetry SDK: a fresh process starts it, serves a
 * request, and lists the OpenTelemetry packages it loaded (the API alone comes with prom-client).
 * With an endpoint set, the same process loads the SDK: the check can see it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runnableEnv } from '../tools/fixture-servers.js';

async function loadedPackages(env: Record<string, string>): Promise<{ status: number; packages: string[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/fixtures/tracing/loaded-sdk.ts'], {
    env: runnableEnv(env),
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { status: number; packages: string[] };
}

test('tracing off: no OpenTelemetry SDK, exporter or context manager is loaded', async () => {
  const off = await loadedPackages({});
  assert.equal(off.status, 200);
  assert.deepEqual(
    off.packages.filter((name) => name !== '@opentelemetry/api'),
    [],
  );
});

test('tracing on: the SDK and the exporter are loaded (the check above can see them)', async () => {
  // Nothing listens there: the one export fails in the background, and the process stops anyway.
  const on = await loadedPackages({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '200' });
  assert.equal(on.status, 200);
  for (const name of ['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-proto', '@opentelemetry/core']) {
    assert.ok(on.packages.includes(name), `${name} in ${on.packages.join(', ')}`);
  }
});
