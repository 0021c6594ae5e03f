import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiKeyFor, authHeaders, startTestGateway, walletHeaders, WALLET, type TestGateway } from '../../../helpers/gateway.js';
import { fixtureServer, isAlive, runnableEnv, waitFor } from '../../tools/fixture-servers.js';
import { MAX_JSON_DEPTH } from '../../../../gateway/http/middleware/json-body.js';

async function execute(gateway: TestGateway, body: unknown, headers = walletHeaders()) {
  const response = await fetch(`${gateway.url}/v1/tools/execute`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

async function getJson(gateway: TestGateway, path: string, headers: Record<string, string> = walletHeaders()) {
  const response = await fetch(`${gateway.url}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('/v1/tools and /v1/tools/execute', () => {
  let gateway: TestGateway;
  let scratch: string;
  let cancelLog: string;
  let startLog: string;
  let holdFile: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-tools-http-'));
    cancelLog = join(scratch, 'cancelled.log');
    startLog = join(scratch, 'started.log');
    holdFile = join(scratch, 'hold-exits');
    gateway = await startTestGateway({
      config: (json) => {
        json.mcpServers = {
          echo: fixtureServer('echo'),
          slow: fixtureServer('slow', { timeoutMs: 1500, env: { SLOW_CANCEL_LOG: cancelLog, SLOW_START_LOG: startLog } }),
          exits: fixtureServer('exits-on-call', { env: { EXITS_HOLD_FILE: holdFile } }),
        };
      },
      env: runnableEnv(),
    });
  });

  after(async () => {
    await gateway?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('GET /v1/tools lists the tools that can run now with params, server and input_schema', async () => {
    const { status, body } = await getJson(gateway, '/v1/tools');
    assert.equal(status, 200);
    const tools = body.tools as Array<Record<string, unknown>>;
    assert.deepEqual(
      tools.map((t) => t.name),
      ['list_tools', 'echo', 'echo_env', 'echo_argv', 'echo_pid', 'echo_fail', 'sleep', 'crash_now', 'alive'],
    );
    const echo = tools.find((t) => t.name === 'echo')!;
    assert.deepEqual(Object.keys(echo), ['name', 'description', 'params', 'server', 'input_schema']);
    assert.deepEqual([echo.description, echo.params, echo.server], ['Echo the text back.', ['text'], 'echo']);
    assert.deepEqual((echo.input_schema as { required: string[] }).required, ['text']);
  });

  test('the tool routes need the wallet header', async () => {
    const { status, body } = await getJson(gateway, '/v1/tools', {});
    assert.equal(status, 400);
    assert.equal((body.error as { code: string }).code, 'invalid_wallet_address');
  });

  test('POST /v1/tools/execute runs a tool: {ok: true, tool, result}', async () => {
    const { status, body } = await execute(gateway, { tool: 'echo', args: { text: 'hello' } });
    assert.equal(status, 200);
    assert.deepEqual(body, { ok: true, tool: 'echo', result: { text: 'hello' } });
  });

  test('args may be left out; list_tools runs through execute', async () => {
    const { status, body } = await execute(gateway, { tool: 'list_tools' });
    assert.equal(status, 200);
    const result = body.result as { tools: Array<{ name: string; server: string }> };
    assert.equal(result.tools.length, 9);
    const filtered = await execute(gateway, { tool: 'list_tools', args: { query: 'sleep' } });
    assert.deepEqual(filtered.body.result, {
      tools: [{ name: 'sleep', description: 'Wait for ms milliseconds, then answer.', params: ['ms', 'tag'], server: 'slow' }],
    });
  });

  test('every failure has {ok: false, tool, error} with an honest status', async () => {
    const cases: Array<[string, unknown, number, { code: string; param: string | null; type: string; message?: string }, string | null]> = [
      ['body not an object', [1, 2], 400, { code: 'invalid_request', param: null, type: 'invalid_request_error' }, null],
      ['tool missing', { args: {} }, 400, { code: 'invalid_request', param: 'tool', type: 'invalid_request_error' }, null],
      ['tool not a string', { tool: 5 }, 400, { code: 'invalid_request', param: 'tool', type: 'invalid_request_error' }, null],
      [
        'args a string',
        { tool: 'echo', args: 'hello' },
        400,
        { code: 'invalid_tool_arguments', param: 'args', type: 'invalid_request_error', message: 'args must be a JSON object.' },
        'echo',
      ],
      [
        'args an array',
        { tool: 'echo', args: ['hello'] },
        400,
        { code: 'invalid_tool_arguments', param: 'args', type: 'invalid_request_error' },
        'echo',
      ],
      [
        'unknown tool',
        { tool: 'nope', args: {} },
        404,
        { code: 'tool_not_found', param: 'tool', type: 'not_found_error', message: 'Unknown tool "nope".' },
        'nope',
      ],
      [
        'args failing the schema',
        { tool: 'echo', args: {} },
        400,
        { code: 'invalid_tool_arguments', param: 'text', type: 'invalid_request_error', message: 'text: is required' },
        'echo',
      ],
      [
        "the tool's not_found",
        { tool: 'echo_fail', args: { code: 'not_found', message: 'No such block.' } },
        404,
        { code: 'not_found', param: null, type: 'not_found_error', message: 'No such block.' },
        'echo_fail',
      ],
      [
        'upstream_unavailable',
        { tool: 'echo_fail', args: { code: 'upstream_unavailable', message: 'All providers failed: a: HTTP 500' } },
        502,
        { code: 'upstream_unavailable', param: null, type: 'upstream_error', message: 'All providers failed: a: HTTP 500' },
        'echo_fail',
      ],
      [
        'url_not_allowed',
        { tool: 'echo_fail', args: { code: 'url_not_allowed', message: 'Private address.', param: 'url' } },
        400,
        { code: 'url_not_allowed', param: 'url', type: 'invalid_request_error' },
        'echo_fail',
      ],
      [
        'timeout',
        { tool: 'sleep', args: { ms: 20_000 } },
        504,
        { code: 'tool_timeout', param: null, type: 'upstream_error', message: 'Tool "sleep" did not answer within 1500 ms.' },
        'sleep',
      ],
    ];
    for (const [what, body, status, error, tool] of cases) {
      const response = await execute(gateway, body);
      assert.equal(response.status, status, what);
      assert.equal(response.body.ok, false, what);
      assert.equal(response.body.tool, tool, what);
      const got = response.body.error as Record<string, unknown>;
      assert.equal(got.code, error.code, what);
      assert.equal(got.param, error.param, what);
      assert.equal(got.type, error.type, what);
      if (error.message) assert.equal(got.message, error.message, what);
    }
  });

  test('invalid JSON is refused with the execute error shape', async () => {
    const response = await execute(gateway, '{"tool":');
    assert.equal(response.status, 400);
    assert.equal(response.body.ok, false);
    assert.equal(response.body.tool, null);
    assert.equal((response.body.error as { code: string }).code, 'invalid_json');
  });

  test('args nested past MAX_JSON_DEPTH → 400 invalid_request in the execute shape (5,000 levels were a 500 stack overflow)', async () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    // The body is level 1, args 2, so the array may take the rest.
    const fits = await execute(gateway, `{"tool":"echo","args":{"text":"deep","pad":${nested(MAX_JSON_DEPTH - 2)}}}`);
    assert.deepEqual(fits.body, { ok: true, tool: 'echo', result: { text: 'deep' } });
    for (const depth of [MAX_JSON_DEPTH - 1, 5000]) {
      const refused = await execute(gateway, `{"tool":"echo","args":{"text":"deep","pad":${nested(depth)}}}`);
      assert.equal(refused.status, 400, `depth ${depth}`);
      assert.deepEqual(refused.body, {
        ok: false,
        tool: 'echo',
        error: {
          message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
          type: 'invalid_request_error',
          code: 'invalid_request',
          param: null,
        },
      });
    }
  });

  test('a client that disconnects cancels its call at the tool server', async () => {
    await new Promise<void>((resolve) => {
      const req = request(`${gateway.url}/v1/tools/execute`, { method: 'POST', headers: walletHeaders() });
      req.on('error', () => resolve());
      req.end(JSON.stringify({ tool: 'sleep', args: { ms: 1200, tag: 'disconnect' } }));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 400);
    });
    await waitFor(
      'the cancellation at the server',
      () => existsSync(cancelLog) && readFileSync(cancelLog, 'utf8').includes('cancelled disconnect'),
    );
  });

  test('a crashed server: fast 503 with Retry-After, health degraded, then restarted with its tools and health ok', async () => {
    // Its restart waits while this file exists: the down state stays put until we have looked.
    writeFileSync(holdFile, '');
    const crashed = await execute(gateway, { tool: 'crash_now', args: {} });
    assert.equal(crashed.status, 503);
    assert.match(crashed.headers.get('retry-after') ?? '', /^\d+$/);
    assert.deepEqual(
      [crashed.body.ok, crashed.body.tool, (crashed.body.error as { code: string }).code],
      [false, 'crash_now', 'tool_unavailable'],
    );

    // (The upstream models of this config are unreachable, so /health's overall status also
    // reflects them; the tool host's own verdict is checked through its contributor.)
    const health = await getJson(gateway, '/health', {});
    assert.equal(health.body.status, 'degraded');
    assert.equal(gateway.tools.health().degraded, true);
    const entry = (health.body.tool_servers as Array<Record<string, unknown>>).find((s) => s.name === 'exits')!;
    assert.ok(['down', 'starting'].includes(entry.status as string), String(entry.status));
    assert.equal(entry.tools, 0);
    const listedWhileDown = await getJson(gateway, '/v1/tools');
    assert.ok(!(listedWhileDown.body.tools as Array<{ name: string }>).some((t) => t.name === 'alive'));
    const down = await execute(gateway, { tool: 'alive', args: {} });
    assert.deepEqual([down.status, (down.body.error as { code: string }).code], [503, 'tool_unavailable']);

    rmSync(holdFile);
    const allUp = (body: Record<string, unknown>) => (body.tool_servers as Array<{ status: string }>).every((s) => s.status === 'up');
    await waitFor('every tool server up again', async () => allUp((await getJson(gateway, '/health', {})).body));
    assert.equal(gateway.tools.health().degraded, false);
    const healed = await getJson(gateway, '/health', {});
    assert.deepEqual(healed.body.tool_servers, [
      { name: 'echo', status: 'up', tools: 5, restarts: 0 },
      { name: 'slow', status: 'up', tools: 1, restarts: 0 },
      { name: 'exits', status: 'up', tools: 2, restarts: 1 },
    ]);
    const listed = await getJson(gateway, '/v1/tools');
    assert.ok((listed.body.tools as Array<{ name: string }>).some((t) => t.name === 'alive'));
    const alive = await execute(gateway, { tool: 'alive', args: {} });
    assert.equal(alive.status, 200);
  });

  test('tool calls are counted by tool and outcome', async () => {
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    assert.match(metrics, /switchyard_tool_calls_total\{tool="echo",outcome="ok"\} [1-9]/);
    assert.match(metrics, /switchyard_tool_calls_total\{tool="sleep",outcome="tool_timeout"\} [1-9]/);
    assert.match(metrics, /switchyard_tool_calls_total\{tool="echo_fail",outcome="not_found"\} [1-9]/);
    assert.match(metrics, /switchyard_tool_call_duration_seconds_count\{tool="echo",outcome="ok"\} [1-9]/);
  });

  test('stopping the gateway ends every tool server process (checked by pid)', async () => {
    const pids = ['echo', 'slow', 'exits'].map((name) => gateway.tools.server(name)!.pid!);
    assert.ok(pids.every((pid) => isAlive(pid)));
    await gateway.stop();
    assert.deepEqual(pids.filter(isAlive), []);
  });
});

describe('/v1/tools/execute with credits on', () => {
  let gateway: TestGateway;
  let key: string;
  let scratch: string;
  let startLog: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-tools-credits-'));
    startLog = join(scratch, 'started.log');
    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = false;
        json.mcpServers = { echo: fixtureServer('echo'), slow: fixtureServer('slow', { env: { SLOW_START_LOG: startLog } }) };
      },
      env: runnableEnv(),
    });
    key = await apiKeyFor(gateway);
  });

  after(async () => {
    await gateway?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('a successful run costs 1 credit; rejected and failed runs cost nothing; no credit → 402', async () => {
    await gateway.ledger.grant(WALLET, 2);
    const ok = await execute(gateway, { tool: 'echo', args: { text: 'paid' } }, authHeaders(key));
    assert.equal(ok.status, 200);
    assert.equal((await gateway.ledger.balance(WALLET)).credits, 1);

    for (const body of [
      { tool: 'nope' },
      { tool: 'echo', args: 'x' },
      { tool: 'echo', args: {} },
      { tool: 'echo_fail', args: { code: 'upstream_unavailable' } },
    ]) {
      const failed = await execute(gateway, body, authHeaders(key));
      assert.equal(failed.body.ok, false);
    }
    assert.equal((await gateway.ledger.balance(WALLET)).credits, 1);

    assert.equal((await execute(gateway, { tool: 'echo', args: { text: 'last' } }, authHeaders(key))).status, 200);
    const broke = await execute(gateway, { tool: 'echo', args: { text: 'more' } }, authHeaders(key));
    assert.equal(broke.status, 402);
    assert.deepEqual(
      [broke.body.ok, broke.body.tool, (broke.body.error as { code: string }).code],
      [false, 'echo', 'insufficient_credits'],
    );
    const balance = await gateway.ledger.balance(WALLET);
    assert.deepEqual([balance.credits, balance.total_spent], [0, 2]);
  });

  test('a wallet seen holding plenty holds nothing while its tool runs and pays once answered; emptied meanwhile, 402 and the result dropped', async () => {
    const wallet = '0x' + 'e7'.repeat(20);
    const walletKey = await apiKeyFor(gateway, wallet);
    await gateway.ledger.grant(wallet, 10);
    assert.equal((await execute(gateway, { tool: 'echo', args: { text: 'seen' } }, authHeaders(walletKey, wallet))).status, 200);
    const sleeping = (tag: string) => execute(gateway, { tool: 'sleep', args: { ms: 600, tag } }, authHeaders(walletKey, wallet));
    // Wait for the call to reach the tool server, not for a while: the tool answers 600 ms after it starts.
    const started = (tag: string) =>
      waitFor(`${tag} at the server`, () => existsSync(startLog) && readFileSync(startLog, 'utf8').includes(`started ${tag}\n`));

    const paid = sleeping('paid');
    await started('paid');
    assert.equal((await gateway.ledger.balance(wallet)).credits, 9, 'nothing held while the tool runs');
    assert.equal((await paid).status, 200);
    assert.equal((await gateway.ledger.balance(wallet)).credits, 8);

    const refused = sleeping('refused');
    await started('refused');
    await gateway.ledger.charge(wallet, 8); // spent elsewhere: another request, another instance
    const answer = await refused;
    assert.equal(answer.status, 402);
    assert.deepEqual(
      [answer.body.ok, (answer.body.error as { code: string }).code, answer.body.result],
      [false, 'insufficient_credits', undefined],
    );
    assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 10, total_spent: 10 });
  });

  test('without a key the tool routes answer 401', async () => {
    const response = await execute(gateway, { tool: 'echo', args: { text: 'x' } });
    assert.equal(response.status, 401);
    assert.equal(response.body.ok, false);
  });
});
