/**
 * `tools/call` through `POST /mcp` against `POST /v1/tools/execute` for the same tool (the echo
 * fixture), on one built gateway (its own process, FREE_MODE=true, rate limits out of the way),
 * in one run:
 *  - 1 connection per route, sequential requests on keep-alive sockets, the routes taking turns
 *    request by request: p50 and p99 (target: /mcp p50 at most 1.25x of execute's);
 *  - 50 connections with autocannon: requests/s (target: /mcp at least 0.8x of execute's), and
 *    the gateway's and tool server's CPU per request (from /proc), which neighbours' load moves less.
 * A third row sends the same call as a batch of one, which /mcp answers through a fresh SDK server
 * and transport (the path of every message but a lone tools/call): the cost the fast path saves.
 * The 50-connection windows take turns, ROUNDS times, and each figure is the median of its rounds:
 * the machine is shared, and a slow moment should not land on one route only. Every answer is checked against
 * the one the route gives for a successful call; any other answer (an isError result, a non-2xx)
 * makes the run exit 1 without a ratio. /mcp requests are what an MCP client sends after
 * initialize (stateless, so no session): JSON-RPC tools/call with the Accept and protocol headers.
 *
 *   npm run build && npx tsx bench/mcp-overhead.ts [seconds per window, default 5] [rounds, default 3]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);
if (!(SECONDS >= 3) || !(ROUNDS >= 1)) {
  console.error('bench/mcp-overhead: give at least 3 s per window and 1 round.');
  process.exit(2);
}
const CONNECTIONS = 50;
/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const CLOCK_TICKS_PER_SECOND = 100;
const WALLET = '0x52908400098527886e0f7030069857d2e4169ee7';

interface Route {
  name: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The answer to a successful call, read once before measuring. */
  expected?: string;
}

const execute: Route = {
  name: 'POST /v1/tools/execute',
  path: '/v1/tools/execute',
  headers: { 'x-wallet-address': WALLET, 'content-type': 'application/json' },
  body: JSON.stringify({ tool: 'echo', args: { text: 'bench' } }),
};
const mcp: Route = {
  name: 'POST /mcp tools/call',
  path: '/mcp',
  headers: {
    'x-wallet-address': WALLET,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
  },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'bench' } } }),
};

/** The same call in a batch of one: answered by a fresh SDK server + transport (the path every other message takes). */
const mcpSdkPath: Route = {
  ...mcp,
  name: 'POST /mcp [tools/call]',
  body: `[${mcp.body}]`,
};

/** A port the OS says is free right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

async function startGateway(): Promise<{ child: ChildProcess; url: string; dir: string }> {
  const config = JSON.parse(readFileSync(join(REPO_ROOT, 'config/gateway.json'), 'utf8')) as Record<string, unknown>;
  config.mcpServers = { echo: { command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/mcp/echo.ts'] } };
  config.limits = { perWallet: { points: 100_000_000, durationSec: 60 }, perIp: { points: 100_000_000, durationSec: 60 } };
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-mcp-'));
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify(config));
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/gateway/main.js'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      SWITCHYARD_CONFIG: join(dir, 'gateway.json'),
      DATA_DIR: join(dir, 'data'),
      PORT: String(port),
      FREE_MODE: 'true',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exit: number | null | undefined;
  child.once('exit', (code) => (exit = code));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (exit !== undefined) throw new Error(`gateway exited with ${exit}`);
    try {
      await fetch(`${url}/health`);
      return { child, url, dir };
    } catch {
      await new Promise((done) => setTimeout(done, 20));
    }
  }
}

async function stopGateway(gateway: { child: ChildProcess; dir: string }): Promise<void> {
  const exited = new Promise((done) => gateway.child.once('exit', done));
  gateway.child.kill('SIGTERM');
  await exited;
  rmSync(gateway.dir, { recursive: true, force: true });
}

/** One request on `agent`: the status and body text. */
function post(url: string, route: Route, agent: Agent): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const req = request(`${url}${route.path}`, { method: 'POST', headers: route.headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', fail);
    req.end(route.body);
  });
}

/** Read the route's answer once and make sure it is a success, so every later answer can be compared with it. */
async function learnExpected(url: string, route: Route): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const { status, text } = await post(url, route, agent);
  agent.destroy();
  const body = JSON.parse(text) as { ok?: boolean; result?: { isError?: boolean; structuredContent?: unknown } };
  const answer = Array.isArray(body) ? (body[0] as typeof body) : body;
  const success = route === execute ? answer.ok === true : answer.result !== undefined && answer.result.isError === undefined;
  if (status !== 200 || !success) throw new Error(`${route.name} did not succeed: ${status} ${text}`);
  route.expected = text;
}

interface Sequential {
  p50: number;
  p99: number;
  failed: number;
}

/**
 * One request at a time per route, each on its own keep-alive socket, the routes taking turns
 * request by request: a slow moment on the shared machine lands on every route alike.
 */
async function sequential(url: string, routes: Route[]): Promise<Map<Route, Sequential>> {
  const agents = routes.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const latencies = routes.map((): number[] => []);
  const failed = routes.map(() => 0);
  const deadline = performance.now() + SECONDS * routes.length * 1000;
  while (performance.now() < deadline) {
    for (const [i, route] of routes.entries()) {
      const started = performance.now();
      const { status, text } = await post(url, route, agents[i]);
      latencies[i].push(performance.now() - started);
      if (status !== 200 || text !== route.expected) failed[i]++;
    }
  }
  for (const agent of agents) agent.destroy();
  return new Map(
    routes.map((route, i) => {
      const sorted = latencies[i].sort((a, b) => a - b);
      const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
      return [route, { p50: at(0.5), p99: at(0.99), failed: failed[i] }];
    }),
  );
}

/**
 * CPU seconds used so far by `pid` and its child processes (the tool server), from /proc (Linux;
 * undefined elsewhere). On a shared machine requests/s swing with the neighbours' load; CPU per
 * request is what decides throughput once the cores are busy, and it swings much less.
 */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined;
  const ticks = (id: string) => {
    const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  };
  let total = ticks(String(pid));
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ') : []) total += ticks(child);
  }
  return total / CLOCK_TICKS_PER_SECOND;
}

interface Concurrent {
  rps: number;
  /** Gateway + tool server CPU per request, in microseconds (undefined without /proc). */
  cpuPerRequest?: number;
  failed: number;
}

async function concurrent(url: string, route: Route, seconds = SECONDS, pid?: number): Promise<Concurrent> {
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({
    url: `${url}${route.path}`,
    method: 'POST',
    connections: CONNECTIONS,
    headers: route.headers,
    body: route.body,
    expectBody: route.expected,
    duration: seconds,
  });
  const cpuAfter = cpuSeconds(pid);
  const cpuPerRequest =
    cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) / result.requests.total) * 1e6;
  return { rps: result.requests.average, cpuPerRequest, failed: result.non2xx + result.errors + result.mismatches };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const gateway = await startGateway();
try {
  const routes = [execute, mcp, mcpSdkPath];
  for (const route of routes) await learnExpected(gateway.url, route);
  for (const route of routes) await concurrent(gateway.url, route, 2); // warm-up (JIT, the echo child)

  const figures = new Map<Route, { seq: Sequential[]; conc: Concurrent[] }>(routes.map((route) => [route, { seq: [], conc: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which route goes first, so neither always follows the other's leftovers.
    const order = round % 2 === 0 ? routes : [...routes].reverse();
    for (const route of order) figures.get(route)!.conc.push(await concurrent(gateway.url, route, SECONDS, gateway.child.pid));
    for (const [route, figure] of await sequential(gateway.url, order)) figures.get(route)!.seq.push(figure);
    const rounds = routes.map((route) => {
      const { seq, conc } = figures.get(route)!;
      const cpu = conc[round].cpuPerRequest;
      const cpuText = cpu === undefined ? '' : ` (${cpu.toFixed(0)} µs CPU/req)`;
      return `${route.name} ${conc[round].rps.toFixed(0)} req/s${cpuText}, p50 ${seq[round].p50.toFixed(3)} ms`;
    });
    console.log(`round ${round + 1}: ${rounds.join('; ')}`);
  }

  console.log(`windows of ${SECONDS} s, ${ROUNDS} rounds (medians), echo tool, free mode`);
  let failed = 0;
  const summary = new Map<Route, { rps: number; cpu?: number; p50: number; p99: number }>();
  for (const [route, { seq, conc }] of figures) {
    const cpus = conc.flatMap((c) => (c.cpuPerRequest === undefined ? [] : [c.cpuPerRequest]));
    const row = {
      rps: median(conc.map((c) => c.rps)),
      cpu: cpus.length > 0 ? median(cpus) : undefined,
      p50: median(seq.map((s) => s.p50)),
      p99: median(seq.map((s) => s.p99)),
    };
    const routeFailed = seq.reduce((n, s) => n + s.failed, 0) + conc.reduce((n, c) => n + c.failed, 0);
    failed += routeFailed;
    summary.set(route, row);
    console.log(
      `${route.name.padEnd(26)} @${CONNECTIONS} ${row.rps.toFixed(0).padStart(7)} req/s ` +
        `${row.cpu === undefined ? '' : `${row.cpu.toFixed(0).padStart(5)} µs CPU/req`}   ` +
        `@1 p50 ${row.p50.toFixed(3).padStart(7)} ms  p99 ${row.p99.toFixed(3).padStart(7)} ms   failed ${routeFailed}`,
    );
  }
  if (failed > 0) {
    console.log('no ratio: some calls did not succeed');
    process.exitCode = 1;
  } else {
    const base = summary.get(execute)!;
    const over = summary.get(mcp)!;
    const throughput = over.rps / base.rps;
    const latency = over.p50 / base.p50;
    console.log(
      `/mcp vs execute: throughput @${CONNECTIONS} ${throughput.toFixed(2)}x (target >= 0.80), ` +
        `p50 @1 ${latency.toFixed(2)}x (target <= 1.25)`,
    );
    if (base.cpu !== undefined && over.cpu !== undefined) {
      // What the throughput ratio would be with the cores to ourselves: requests per CPU second.
      const cpuRatio = over.cpu / base.cpu;
      console.log(
        `gateway + tool server CPU per request: /mcp ${cpuRatio.toFixed(2)}x of execute ` +
          `(requests per CPU second ${(1 / cpuRatio).toFixed(2)}x)`,
      );
    }
  }
} finally {
  await stopGateway(gateway);
}
