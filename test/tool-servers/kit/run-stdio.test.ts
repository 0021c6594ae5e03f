import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

// runStdio through a real stdio entry: the server stops with exit code 0 when stdin ends or on SIGTERM.
function startServer() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/mcp/echo.ts'], {
    env: { PATH: process.env.PATH ?? '', ...(process.env.NODE_V8_COVERAGE ? { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE } : {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // An initialize request proves it is serving before we stop it.
  const ready = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdin.write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }) + '\n',
  );
  return { child, exited, ready };
}

test('a stdio tool server exits 0 when stdin ends', async () => {
  const { child, exited, ready } = startServer();
  await ready;
  child.stdin.end();
  assert.equal(await exited, 0);
});

test('a stdio tool server exits 0 on SIGTERM', async () => {
  const { child, exited, ready } = startServer();
  await ready;
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
