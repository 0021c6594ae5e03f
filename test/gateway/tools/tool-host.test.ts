import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpServerConfig } from '../../../gateway/config.js';
import { createToolHost, ToolHostStartError, type ToolHost } from '../../../gateway/tools/tool-host.js';
import { startHttpMcpFixture, type HttpMcpFixture } from '../../fixtures/mcp/http-server.js';
import { capturingLogger, fixtureServer, isAlive, runnableEnv, waitFor, failure } from './fixture-servers.js';

function cancelLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe('tool host with fixture servers', () => {
  let host: ToolHost;
  let http: HttpMcpFixture;
  let scratch: string;
  let cancelLog: string;
  const { logger, lines } = capturingLogger();

  before(async () => {
    http = await startHttpMcpFixture();
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-tools-'));
    cancelLog = join(scratch, 'cancelled.log');
    const servers: Record<string, McpServerConfig> = {
      echo: fixtureServer('echo', {
        env: {
          FORWARDED: '${GW_FORWARDED}',
          DEFAULTED: '${UNSET_VAR:-fallback}',
          DROPPED: '${UNSET_VAR}',
          EMPTY: '${EMPTY_VAR}',
          LITERAL: 'plain',
        },
        args: ['--flag', '${ARG_VAR}', '${UNSET_ARG}', '${UNSET_ARG:-arg-default}', 'x-${ARG_VAR}-y'],
      }),
      slow: fixtureServer('slow', { timeoutMs: 1500, env: { SLOW_CANCEL_LOG: cancelLog } }),
      exits: fixtureServer('exits-on-call'),
      changing: fixtureServer('list-changed'),
      shouty: fixtureServer('duplicate', { prefix: 'shouty_' }),
      remote: {
        url: '${HTTP_FIXTURE_URL}',
        headers: { authorization: 'Bearer ${REMOTE_TOKEN}', 'x-dropped': '${UNSET_VAR}' },
        timeoutMs: 5000,
        disabled: false,
        prefix: '',
      },
      off: { command: 'definitely-not-a-command', args: [], env: {}, timeoutMs: 1000, disabled: true, prefix: '' },
    };
    host = createToolHost({
      servers,
      env: runnableEnv({
        GW_FORWARDED: 'forwarded-value',
        GATEWAY_SECRET: 'must-not-leak',
        ARG_VAR: 'arg-value',
        EMPTY_VAR: '',
        HTTP_FIXTURE_URL: http.url,
        REMOTE_TOKEN: 'remote-token',
      }),
      logger,
      policy: { initialDelayMs: 200 },
    });
    await host.start();
  });

  after(async () => {
    await host?.close();
    await http?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('aggregates every enabled server into one list, built-ins first', () => {
    const tools = host.listTools();
    assert.deepEqual(
      tools.map((t) => `${t.server}:${t.name}`),
      [
        'gateway:list_tools',
        'echo:echo',
        'echo:echo_env',
        'echo:echo_argv',
        'echo:echo_pid',
        'echo:echo_fail',
        'slow:sleep',
        'exits:crash_now',
        'exits:alive',
        'changing:add_tool',
        'shouty:shouty_echo',
        'remote:remote_echo',
        'remote:remote_malformed',
        'remote:remote_missing',
      ],
    );
    const sleep = tools.find((t) => t.name === 'sleep')!;
    assert.deepEqual(sleep.params, ['ms', 'tag']);
    assert.equal(sleep.description, 'Wait for ms milliseconds, then answer.');
    assert.equal((sleep.inputSchema as { type: string }).type, 'object');
    // Output schemas are carried as the server declared them (the /mcp listing hands them on).
    assert.deepEqual((sleep.outputSchema as { properties: unknown }).properties, { slept: { type: 'number' } });
    const listTools = tools.find((t) => t.name === 'list_tools')!;
    assert.deepEqual((listTools.outputSchema as { required: string[] }).required, ['tools']);
  });

  test('runs a tool and returns its structured result', async () => {
    assert.deepEqual(await host.callTool('echo', { text: 'hello' }), { text: 'hello' });
  });

  test('a prefixed server answers under its prefixed name; the plain name stays with its owner', async () => {
    assert.deepEqual(await host.callTool('shouty_echo', { text: 'hi' }), { text: 'HI' });
    assert.deepEqual(await host.callTool('echo', { text: 'hi' }), { text: 'hi' });
  });

  test('a child gets only its configured env (expanded) plus PATH, HOME and NODE_V8_COVERAGE', async () => {
    const result = (await host.callTool('echo_env', {
      names: ['FORWARDED', 'DEFAULTED', 'LITERAL', 'GATEWAY_SECRET', 'DROPPED', 'EMPTY'],
    })) as {
      keys: string[];
      values: Record<string, string | null>;
    };
    assert.deepEqual(result.values, {
      FORWARDED: 'forwarded-value',
      DEFAULTED: 'fallback',
      LITERAL: 'plain',
      GATEWAY_SECRET: null,
      DROPPED: null,
      EMPTY: null,
    });
    const expected = ['DEFAULTED', 'FORWARDED', 'LITERAL', ...Object.keys(runnableEnv())].sort();
    assert.deepEqual(result.keys, expected);
    assert.deepEqual(host.server('echo')!.spawnEnv, {
      ...runnableEnv(),
      FORWARDED: 'forwarded-value',
      DEFAULTED: 'fallback',
      LITERAL: 'plain',
    });
  });

  test('args are expanded and an argument whose variable is unset is dropped', async () => {
    const result = (await host.callTool('echo_argv', {})) as { argv: string[] };
    assert.deepEqual(result.argv, ['--flag', 'arg-value', 'arg-default', 'x-arg-value-y']);
  });

  test('each kit error code maps to its status and public code, keeping message and param', async () => {
    const cases: Array<[string, number, string, string | null]> = [
      ['invalid_arguments', 400, 'invalid_tool_arguments', 'address'],
      ['not_found', 404, 'not_found', null],
      ['url_not_allowed', 400, 'url_not_allowed', 'url'],
      ['upstream_unavailable', 502, 'upstream_unavailable', null],
      ['timeout', 504, 'tool_timeout', null],
      ['internal_error', 500, 'tool_error', null],
    ];
    for (const [code, status, publicCode, param] of cases) {
      const err = await failure(host.callTool('echo_fail', { code, message: `said ${code}`, ...(param ? { param } : {}) }));
      assert.deepEqual([err.status, err.code, err.message, err.param], [status, publicCode, `said ${code}`, param], code);
    }
    const bug = await failure(host.callTool('echo_fail', { code: 'crash' }));
    assert.deepEqual([bug.status, bug.code, bug.message], [500, 'tool_error', 'The tool failed unexpectedly.']);
  });

  test("arguments failing the tool's schema → 400 invalid_tool_arguments naming the field", async () => {
    const err = await failure(host.callTool('echo', { text: 42 }));
    assert.deepEqual([err.status, err.code, err.param, err.message], [400, 'invalid_tool_arguments', 'text', 'text: must be string']);
  });

  test('an unknown name → 404 tool_not_found', async () => {
    const err = await failure(host.callTool('no_such_tool', {}));
    assert.deepEqual([err.status, err.code, err.message, err.param], [404, 'tool_not_found', 'Unknown tool "no_such_tool".', 'tool']);
    assert.equal(host.hasTool('no_such_tool'), false);
    assert.equal(host.hasTool('echo'), true);
    assert.equal(host.hasTool('list_tools'), true);
  });

  test('a call past timeoutMs → 504 tool_timeout, and the server sees the cancellation', async () => {
    const started = Date.now();
    const err = await failure(host.callTool('sleep', { ms: 20_000, tag: 'timeout' }));
    assert.deepEqual([err.status, err.code, err.message], [504, 'tool_timeout', 'Tool "sleep" did not answer within 1500 ms.']);
    assert.ok(Date.now() - started < 10_000);
    await waitFor('the cancellation at the server', () => cancelLines(cancelLog).includes('cancelled timeout'));
  });

  test("the caller's signal cancels the call at the server", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const err = await failure(host.callTool('sleep', { ms: 20_000, tag: 'caller' }, { signal: controller.signal }));
    assert.deepEqual([err.status, err.code], [499, 'request_cancelled']);
    await waitFor('the cancellation at the server', () => cancelLines(cancelLog).includes('cancelled caller'));
    const already = await failure(host.callTool('echo', { text: 'x' }, { signal: controller.signal }));
    assert.equal(already.code, 'request_cancelled');
  });

  test('list_tools is answered from the registry and filters by words', async () => {
    const all = (await host.callTool('list_tools', {})) as { tools: Array<{ name: string; server: string; params: string[] }> };
    assert.equal(all.tools.length, host.listTools().length);
    const found = (await host.callTool('list_tools', { query: 'remote echo' })) as {
      tools: Array<{ name: string; server: string; params: string[] }>;
    };
    assert.deepEqual(found.tools[0], {
      name: 'remote_echo',
      description: 'Echo the text back, from a remote server.',
      params: ['text'],
      server: 'remote',
    });
    assert.ok(found.tools.some((t) => t.name === 'echo'));
    assert.ok(!found.tools.some((t) => t.name === 'sleep'));
    const none = (await host.callTool('list_tools', { query: 'zebra' })) as { tools: unknown[] };
    assert.deepEqual(none.tools, []);
    const bad = await failure(host.callTool('list_tools', { query: 7 }));
    assert.deepEqual([bad.status, bad.code, bad.param], [400, 'invalid_tool_arguments', 'query']);
  });

  test('a Streamable HTTP server is reached with its expanded headers; a missing header variable drops the header', async () => {
    assert.deepEqual(await host.callTool('remote_echo', { text: 'far' }), { text: 'far', remote: true });
    const last = http.requests.at(-1)!;
    assert.equal(last.authorization, 'Bearer remote-token');
    assert.equal(last['x-dropped'], undefined);
    const err = await failure(host.callTool('remote_missing', {}));
    assert.deepEqual([err.status, err.code, err.message], [404, 'not_found', 'Nothing here.']);
  });

  test('notifications/tools/list_changed brings new tools into the registry', async () => {
    assert.deepEqual(await host.callTool('add_tool', { name: 'fresh_tool' }), { added: 'fresh_tool' });
    await waitFor('fresh_tool to be listed', () => host.listTools().some((t) => t.name === 'fresh_tool'));
    // A server outside our kit may answer with plain text only.
    assert.deepEqual(await host.callTool('fresh_tool', {}), { text: 'ran fresh_tool' });
  });

  test('a server that exits: fast 503 with Retry-After, then restart, tools back, health ok again', async () => {
    const before = (await host.callTool('alive', {})) as { pid: number };
    assert.equal(host.server('exits')!.pid, before.pid);
    const started = Date.now();
    const crashed = await failure(host.callTool('crash_now', {}));
    assert.deepEqual([crashed.status, crashed.code], [503, 'tool_unavailable']);
    assert.match(crashed.headers['Retry-After'], /^\d+$/);
    assert.ok(Date.now() - started < 5000, 'the crash is reported without waiting for a timeout');
    assert.ok(!isAlive(before.pid));

    // While it is down: calls fail at once, /v1/tools no longer lists its tools, health says degraded.
    const down = await failure(host.callTool('alive', {}));
    assert.deepEqual(
      [down.status, down.code, down.message],
      [503, 'tool_unavailable', 'Tool "alive" is unavailable: its server "exits" is not running. Retry in 1 s.'],
    );
    assert.equal(down.headers['Retry-After'], '1');
    assert.ok(!host.listTools().some((t) => t.name === 'alive'));
    const health = host.health();
    assert.equal(health.degraded, true);
    const entry = health.fields.tool_servers.find((s) => s.name === 'exits')!;
    assert.deepEqual([entry.status, entry.tools, entry.error], ['down', 0, { kind: 'exited', message: 'exited with code 3' }]);

    await waitFor('the server to be back', () => host.server('exits')!.status === 'up');
    const after = (await host.callTool('alive', {})) as { pid: number };
    assert.notEqual(after.pid, before.pid);
    assert.ok(host.listTools().some((t) => t.name === 'crash_now'));
    const healed = host.health();
    assert.equal(healed.degraded, false);
    assert.deepEqual(
      healed.fields.tool_servers.find((s) => s.name === 'exits'),
      { name: 'exits', status: 'up', tools: 2, restarts: 1 },
    );
    assert.ok(lines.some((l) => l.msg === 'tool server down' && l.server === 'exits' && l.reason === 'exited with code 3'));
  });

  test('health lists every server with its status; a disabled one does not degrade it', () => {
    const health = host.health();
    assert.deepEqual(
      health.fields.tool_servers.map((s) => [s.name, s.status]),
      [
        ['echo', 'up'],
        ['slow', 'up'],
        ['exits', 'up'],
        ['changing', 'up'],
        ['shouty', 'up'],
        ['remote', 'up'],
        ['off', 'disabled'],
      ],
    );
    assert.equal(health.degraded, false);
    assert.equal(host.server('off'), undefined);
  });

  test('close() ends every child: no process survives (checked by pid)', async () => {
    const pids = ['echo', 'slow', 'exits', 'changing', 'shouty'].map((name) => host.server(name)!.pid!);
    assert.ok(pids.every((pid) => typeof pid === 'number' && isAlive(pid)));
    // Each child leads its own process group, so a terminal's Ctrl-C reaches only the gateway,
    // which drains first and closes its children itself.
    for (const pid of pids) assert.equal(processGroupOf(pid), pid);
    await host.close();
    assert.deepEqual(pids.filter(isAlive), []);
    const err = await failure(host.callTool('echo', { text: 'x' }));
    assert.equal(err.code, 'tool_unavailable');
  });
});

describe('tool host start-up rules', () => {
  test('two servers offering one name is a start-up error naming both, and their children are stopped', async () => {
    const { logger } = capturingLogger();
    const host = createToolHost({
      servers: { echo: fixtureServer('echo'), loud: fixtureServer('duplicate') },
      env: runnableEnv(),
      logger,
    });
    let pids: number[] = [];
    const starting = host.start();
    await waitFor('both children', () => {
      pids = ['echo', 'loud'].map((n) => host.server(n)!.pid).filter((p): p is number => p !== undefined);
      return pids.length === 2;
    });
    await assert.rejects(starting, (err: Error) => {
      assert.ok(err instanceof ToolHostStartError);
      assert.equal(
        err.message,
        'Tool "echo" is offered by both "echo" and "loud". Give one of them a "prefix" in mcpServers (e.g. "prefix": "loud_").',
      );
      return true;
    });
    assert.deepEqual(pids.filter(isAlive), []);
  });

  test('a server that cannot start does not stop the host: it is down, retried, then in crash-loop', async () => {
    const { logger } = capturingLogger();
    const host = createToolHost({
      servers: {
        crashing: fixtureServer('crashing'),
        missing: { command: '/nonexistent/private/tool-server', args: [], env: {}, timeoutMs: 1000, disabled: false, prefix: '' },
      },
      env: runnableEnv(),
      logger,
      policy: { initialDelayMs: 10, maxDelayMs: 40, crashLoopAfter: 3, crashLoopDelayMs: 60_000 },
    });
    try {
      await host.start();
      assert.deepEqual(
        host.listTools().map((t) => t.name),
        ['list_tools'],
      );
      await waitFor(
        'crash-loop',
        () => host.server('crashing')!.status === 'crash-loop' && host.server('missing')!.status === 'crash-loop',
      );
      const health = host.health();
      assert.equal(health.degraded, true);
      const crashing = health.fields.tool_servers.find((s) => s.name === 'crashing')!;
      assert.deepEqual([crashing.status, crashing.tools, crashing.restarts], ['crash-loop', 0, 2]);
      assert.deepEqual(crashing.error, { kind: 'exited', message: 'exited with code 1' });
      // Health answers without auth: the error names the category, and no full path.
      const missing = health.fields.tool_servers.find((s) => s.name === 'missing')!;
      assert.deepEqual(missing.error, { kind: 'start_failed', message: 'spawn …/tool-server ENOENT' });
      // In a crash loop the next attempt is a minute away, and Retry-After says so.
      assert.ok(host.server('crashing')!.retryAfterSeconds() > 50);
    } finally {
      await host.close();
    }
  });

  test('an http server whose url variable is unset is a start-up error naming the field', () => {
    const { logger } = capturingLogger();
    assert.throws(
      () =>
        createToolHost({
          servers: { far: { url: '${FAR_URL}', headers: {}, timeoutMs: 1000, disabled: false, prefix: '' } },
          env: {},
          logger,
        }),
      { name: 'ToolHostStartError', message: 'mcpServers.far.url: a variable in "${FAR_URL}" is not set' },
    );
  });
});

/** Field 5 of /proc/<pid>/stat: the process group id. */
function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}
