import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../../../gateway/errors.js';
import { TRUNCATED_MARK } from '../../../gateway/tools/capped-lines.js';
import { createToolHost } from '../../../gateway/tools/tool-host.js';
import { startHttpMcpFixture } from '../../fixtures/mcp/http-server.js';
import { capturingLogger, fixtureServer, isAlive, runnableEnv, waitFor, failure } from './fixture-servers.js';

/** A tool host whose one server, `remote`, is the Streamable HTTP fixture at `url`. */
function remoteHost(url: string) {
  return createToolHost({
    servers: { remote: { url, headers: {}, timeoutMs: 5000, disabled: false, prefix: '' } },
    env: {},
    logger: capturingLogger().logger,
    policy: { initialDelayMs: 200 },
  });
}

describe('server supervision', () => {
  test('a Streamable HTTP server that goes away: the first call is already a 503 with Retry-After; back when it returns', async () => {
    let http = await startHttpMcpFixture();
    const port = Number(new URL(http.url).port);
    const host = remoteHost(http.url);
    try {
      await host.start();
      assert.deepEqual(await host.callTool('remote_echo', { text: 'a' }), { text: 'a', remote: true });
      await http.close();

      const first = await failure(host.callTool('remote_echo', { text: 'b' }));
      assert.deepEqual([first.status, first.code], [503, 'tool_unavailable']);
      assert.match(first.headers['Retry-After'], /^\d+$/);
      assert.notEqual(host.server('remote')!.status, 'up');

      http = await startHttpMcpFixture(port);
      await waitFor('the remote server to be back', () => host.server('remote')!.status === 'up');
      assert.deepEqual(await host.callTool('remote_echo', { text: 'c' }), { text: 'c', remote: true });
    } finally {
      await host.close();
      await http.close();
    }
  });

  test('a remote server whose host name does not resolve: /health names the DNS failure, not just a closed connection', async () => {
    const host = remoteHost('http://tools.switchyard-test.invalid/mcp'); // .invalid never resolves (RFC 6761)
    try {
      await host.start();
      await waitFor('the first attempt to fail', () => host.server('remote')!.lastError !== undefined);
      const [entry] = host.health().fields.tool_servers;
      assert.equal(entry.error?.kind, 'unreachable');
      assert.match(entry.error?.message ?? '', /getaddrinfo (ENOTFOUND|EAI_AGAIN) tools\.switchyard-test\.invalid/);
    } finally {
      await host.close();
    }
  });

  test('a Streamable HTTP server that answers one malformed result: that call fails, the server stays up for the others', async () => {
    const http = await startHttpMcpFixture();
    const host = remoteHost(http.url);
    try {
      await host.start();
      const err = await failure(host.callTool('remote_malformed', {}));
      assert.notEqual(err.code, 'tool_unavailable');
      assert.equal(host.server('remote')!.status, 'up');
      assert.deepEqual(await host.callTool('remote_echo', { text: 'still here' }), { text: 'still here', remote: true });
    } finally {
      await host.close();
      await http.close();
    }
  });

  test('a server whose tools/list pages forever is a failed start, bounded, not a start that never ends', async () => {
    const { logger } = capturingLogger();
    const host = createToolHost({
      servers: { endless: fixtureServer('odd-listing', { args: ['endless'] }) },
      env: runnableEnv(),
      logger,
      policy: { initialDelayMs: 60_000 },
    });
    try {
      await host.start();
      assert.notEqual(host.server('endless')!.status, 'up');
      assert.match(host.server('endless')!.lastError?.message ?? '', /tools\/list kept paging \(100 pages\)/);
    } finally {
      await host.close();
    }
  });

  test('a tool whose output schema cannot be compiled does not keep its server down', async () => {
    const { logger } = capturingLogger();
    const host = createToolHost({ servers: { odd: fixtureServer('odd-listing') }, env: runnableEnv(), logger });
    try {
      await host.start();
      assert.equal(host.server('odd')!.status, 'up');
      assert.deepEqual(
        host
          .listTools()
          .map((t) => t.name)
          .filter((n) => n === 'plain' || n === 'broken_schema')
          .sort(),
        ['broken_schema', 'plain'],
      );
    } finally {
      await host.close();
    }
  });

  test('a child that writes past the message cap without a newline is killed and marked down, then restarted', async () => {
    const { logger } = capturingLogger();
    const host = createToolHost({
      servers: { floods: fixtureServer('floods') },
      env: runnableEnv(),
      logger,
      policy: { initialDelayMs: 200 },
    });
    try {
      await host.start();
      const pid = host.server('floods')!.pid!;
      const err = await failure(host.callTool('flood_stdout', {}));
      assert.deepEqual([err.status, err.code], [503, 'tool_unavailable']);
      assert.ok(!isAlive(pid));
      assert.deepEqual(host.server('floods')!.lastError, { kind: 'misbehaved', message: 'killed: it sent a message over 16 MiB' });
      await waitFor('the server to be back', () => host.server('floods')!.status === 'up');
      assert.notEqual(host.server('floods')!.pid, pid);
    } finally {
      await host.close();
    }
  });

  test('a stderr line with no newline is cut at 8 KB, not buffered whole', async () => {
    const { logger, lines } = capturingLogger();
    const host = createToolHost({ servers: { floods: fixtureServer('floods') }, env: runnableEnv(), logger });
    try {
      await host.start();
      assert.deepEqual(await host.callTool('flood_stderr', {}), {});
      await waitFor('the line after', () => lines.some((l) => l.stderr === 'after'));
      const stderr = lines.filter((l) => l.msg === 'tool server stderr').map((l) => l.stderr as string);
      assert.deepEqual(stderr, ['y'.repeat(8192) + TRUNCATED_MARK, 'after']);
    } finally {
      await host.close();
    }
  });
});

test("a call's failure is converted with its server's own context: timeout, restart time, a GatewayError unchanged", () => {
  const { logger } = capturingLogger();
  const host = createToolHost({ servers: { echo: fixtureServer('echo', { timeoutMs: 1234 }) }, env: runnableEnv(), logger });
  const supervisor = host.server('echo')!;
  const timeout = supervisor.failure(new McpError(ErrorCode.RequestTimeout, 'Request timed out'), 'echo');
  assert.deepEqual([timeout.status, timeout.code, timeout.message], [504, 'tool_timeout', 'Tool "echo" did not answer within 1234 ms.']);
  const closed = supervisor.failure(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), 'echo');
  assert.deepEqual([closed.status, closed.code], [503, 'tool_unavailable']);
  assert.match(closed.message, /its server "echo" is not running/);
  const cancelled = supervisor.failure(new Error('aborted'), 'echo', AbortSignal.abort());
  assert.equal(cancelled.code, 'request_cancelled');
  const own = new GatewayError({ status: 400, code: 'invalid_tool_arguments', message: 'x' });
  assert.equal(supervisor.failure(own, 'echo'), own);
});
