/**
 * Chat overhead of Switchyard against the floor, in one run, against a zero-latency upstream (issue 39):
 *   (a) the upstream directly, (b) a bare Koa + undici proxy (bench/bare-proxy.ts), then the gateway
 *   as `npm start` runs it: (c) free mode without tool servers, (c=) a second copy of (c) (the
 *   self-comparison: its spread against (c) is the run's noise floor), (c+) credits on, (s) the
 *   shipped config's four tool servers (config/gateway.json: 18 tools offered on every call) in
 *   free mode and (s+) with credits on, (c+k) the credits-on gateway with a key that carries a
 *   credit cap (each charge takes from the key's budget too), (o) free mode with OpenTelemetry
 *   tracing on, exporting every span (protobuf, ratio 1) to an OTLP receiver of its own process
 *   (its CPU per request beside free mode's, and the spans it dropped, from its /health: must be
 *   0), and (t) a one-tool-round chat (1 connection only).
 * For each: req/s and p50/p99 at 1 connection (a sequential keep-alive loop timed with hrtime, for
 * sub-millisecond latencies) and at 50 connections (wrk, one thread, when it is on PATH; else autocannon,
 * or with `--autocannon`) with the server's CPU per request
 * (in all, and on its main thread: the rest is mostly V8's garbage-collection helpers), plus the
 * time to the first content byte of a streamed answer. Every server runs in its own process so the
 * load generator does not share their event loop; the gateway logs at info into a discarded stdout.
 *
 * Small differences (the procedure for them): `--runs` interleaved runs (default 7; each run
 * measures every target once, in reverse order every other run, so a drift of the machine falls on
 * all alike) of `--seconds` windows (default 10), medians printed with each ratio's spread over the
 * runs; the self-comparison (c=) against (c) says how large a difference this run can see at all.
 * `--base <git-ref>` builds that commit in a temporary worktree and measures it beside this tree:
 * (c=) and (c==) are then two copies of the base without tool servers (their spread is the noise
 * floor), (s=) the base with the shipped tool servers, and (c), (s) are set against them.
 *
 * Memory: each server's RSS after warm-up and its peak while measured (sampled every 100 ms), then
 * a soak of `--soak` requests (default 100k) at 50 connections against (s+): its RSS after the
 * soak against its RSS after warm-up (targets ≤ 1.3× and ≤ 180 MB).
 *
 * The exit code is 1 when a target of issue 39 is missed (`--report-only`: 0). `--cpu-prof <dir>`
 * runs every gateway and the bare proxy with `--cpu-prof` into that directory (profiles written at the end).
 * `--targets c,s,s+` measures only those (with (a) and (b), which every ratio needs).
 *
 *   npx tsx bench/chat-overhead.ts                      (runs `npm run build` first; about 40 min)
 *   npx tsx bench/chat-overhead.ts --runs 1 --seconds 3 --soak 5000 --report-only   (a check that it works)
 *   npx tsx bench/chat-overhead.ts --base main          (this tree against main, same run)
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import autocannon from 'autocannon';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';

const REPO_ROOT = resolve(import.meta.dirname, '..');
/** Hardhat's first development key: holds nothing real, signs the bench's SIWE proof. */
const BENCH_PRIVATE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const WALLET = privateKeyToAccount(BENCH_PRIVATE_KEY).address.toLowerCase();
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
/** The procedure for small differences: at least 7 interleaved runs of at least 10 s windows. */
const DEFAULT_RUNS = 7;
const DEFAULT_SECONDS = 10;
/** Requests of the memory soak. */
const DEFAULT_SOAK_REQUESTS = 100_000;
/** The streamed window (time to first byte only) needs no long window. */
const STREAMED_SECONDS = 3;
/** Issue 39's targets. */
const TARGETS = { cpuRatio: 1.5, shippedExtraUs: 40, addedP50Ms: 0.15, creditsThroughput: 0.8, soakMb: 180, soakGrowth: 1.3 };

/** A process's resident set in MB (ps reads /proc; the child needs no cooperation). */
function rssMb(pid: number): number {
  return (
    Number(
      execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
        .toString()
        .trim(),
    ) / 1024
  );
}

/** Sample `pid`'s RSS every 100 ms while `work` runs; the highest seen. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  try {
    return { result: await work(), peak };
  } finally {
    clearInterval(timer);
  }
}

// ---------------------------------------------------------------- child roles

/** A zero-latency OpenAI-compatible upstream: JSON or SSE; a tool call when asked, then text. */
async function runUpstream(): Promise<string> {
  const usage = { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 };
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
      return;
    }
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { stream?: boolean; messages: Array<{ role: string; content: string }> };
      const wantsTool = body.messages.at(-1)?.role === 'user' && body.messages.at(-1)!.content.includes('use a tool');
      const base = { id: 'chatcmpl-0', created: 1, model: 'zero' };
      if (!body.stream) {
        const message = { role: 'assistant', content: 'Hello from the zero-latency upstream.' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }], usage }));
        return;
      }
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const events = wantsTool
        ? [
            chunk({
              role: 'assistant',
              content: '',
              tool_calls: [{ index: 0, id: 'c0', type: 'function', function: { name: 'echo', arguments: '{"text":"hi"}' } }],
            }),
            chunk({}, 'tool_calls'),
          ]
        : [chunk({ role: 'assistant', content: 'Hello' }), chunk({ content: ' from the zero-latency upstream.' }), chunk({}, 'stop')];
      events.push(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`, 'data: [DONE]\n\n');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(events.join(''));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** What a gateway process runs with: credits or free mode, and which tool servers. */
interface GatewayMode {
  credits: boolean;
  /** `echo`: one fixture tool (the tool round); `shipped`: config/gateway.json's four servers. */
  tools: 'none' | 'echo' | 'shipped';
  /** Tracing on, every span exported to this OTLP receiver. */
  traceTo?: string;
}

/**
 * The gateway runs exactly as `npm start` runs it: `node <the start script's flags>
 * dist/gateway/main.js` (no TypeScript loader in its process), with a config file written here,
 * logging at info to a discarded stdout. With credits on, the parent grants credits over the admin
 * API and mints a key with a SIWE proof, as a user would. With the shipped tool servers it is ready
 * when every one of them is up.
 */
async function startGateway(upstream: string, mode: GatewayMode, root: string, cpuProfDir?: string): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const upstreamConfig = { baseUrl: upstream, model: 'zero' };
  const huge = { points: 1_000_000_000, durationSec: 60 };
  const configFile = join(dataDir, 'gateway.json');
  const shipped = JSON.parse(readFileSync(join(root, 'config/gateway.json'), 'utf8')) as { mcpServers: Record<string, unknown> };
  const echo = { echo: { command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/mcp/echo.ts'], env: {} } };
  writeFileSync(
    configFile,
    JSON.stringify({
      server: { port, host: '127.0.0.1', publicUrl: `http://127.0.0.1:${port}` },
      freeMode: !mode.credits,
      adminToken: ADMIN_TOKEN,
      logLevel: 'info',
      limits: { perWallet: huge, perIp: huge, chatConcurrencyPerWallet: 10_000, chatConcurrencyTotal: 10_000 },
      models: [
        { id: 'svc-32b-conductor', alias: 'conductor', upstream: upstreamConfig },
        { id: 'svc-8b-operator', alias: 'operator', upstream: upstreamConfig },
      ],
      mcpServers: mode.tools === 'shipped' ? shipped.mcpServers : mode.tools === 'echo' ? echo : {},
    }),
  );
  const profile = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [];
  const proc = spawn(process.execPath, [...startFlags(root), ...profile, 'dist/gateway/main.js'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SWITCHYARD_CONFIG: configFile,
      DATA_DIR: dataDir,
      ...tracingEnv(mode.traceTo),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const toolServers = Object.keys(mode.tools === 'shipped' ? shipped.mcpServers : mode.tools === 'echo' ? echo : {}).length;
  for (let tries = 0; ; tries++) {
    const up = await fetch(`${url}/health`).then(
      async (r) => {
        const health = (await r.json()) as { tool_servers?: Array<{ status: string }> };
        return (health.tool_servers ?? []).filter((s) => s.status === 'up').length >= toolServers;
      },
      () => false,
    );
    if (up) break;
    if (tries > 600 || proc.exitCode !== null) throw new Error(`gateway (${JSON.stringify(mode)}) did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const info: Record<string, string> = { url };
  if (mode.credits) {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'bench' };
    const granted = await fetch(`${url}/admin/credits/grant`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ address: WALLET, amount: 1_000_000_000 }),
    });
    if (!granted.ok) throw new Error(`grant: ${granted.status}`);
    info.key = await mintKey(url);
    info.cappedKey = await mintKey(url, { max_credits: 1_000_000_000 });
  }
  return { child: proc, info };
}

/** Tracing on, every span exported to `receiver` (a queue large enough that none is dropped at 50 connections). */
function tracingEnv(receiver: string | undefined): Record<string, string> {
  if (!receiver) return {};
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver, OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_QUEUE_SIZE: '65536' };
}

/** The V8 flags of package.json's start script, so the measured process is the one users run. */
function startFlags(root: string): string[] {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts;
  return scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/** A key for WALLET through the public API: nonce, SIWE message signed by a development key, POST. */
async function mintKey(url: string, limits: Record<string, unknown> = {}): Promise<string> {
  const account = privateKeyToAccount(BENCH_PRIVATE_KEY);
  const headers = { 'x-wallet-address': account.address, 'content-type': 'application/json' };
  const { nonce, domain, uri } = (await (await fetch(`${url}/auth/nonce`, { headers })).json()) as Record<string, string>;
  const message = createSiweMessage({
    address: account.address,
    chainId: 1,
    domain,
    uri,
    nonce,
    version: '1',
    issuedAt: new Date(),
    expirationTime: new Date(Date.now() + 5 * 60_000),
  });
  const signature = await account.signMessage({ message });
  const minted = await fetch(`${url}/auth/api-keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'bench', message, signature, ...limits }),
  });
  if (!minted.ok) throw new Error(`mint: ${minted.status} ${await minted.text()}`);
  return ((await minted.json()) as { key: string }).key;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

async function child(role: string, args: string[]): Promise<void> {
  process.once('SIGTERM', () => process.exit(0)); // a clean exit, so --cpu-prof can write its profile
  let out: Record<string, string>;
  if (role === 'upstream') out = { url: await runUpstream() };
  else if (role === 'receiver') out = { url: (await (await import('../test/helpers/otlp-receiver.js')).startOtlpReceiver()).url };
  else out = { url: (await (await import('./bare-proxy.js')).startBareProxy(args[0])).url };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// ---------------------------------------------------------------- parent: measuring

interface Started {
  child: ChildProcess;
  info: Record<string, string>;
}

function startRole(role: string, args: string[] = [], cpuProfDir?: string): Promise<Started> {
  const profile = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [];
  const proc = spawn(process.execPath, [...profile, '--import', 'tsx', 'bench/chat-overhead.ts', '--role', role, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolveStart, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolveStart({ child: proc, info: JSON.parse(line) as Record<string, string> });
    });
    proc.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
}

interface Target {
  /** The short key printed and accepted by `--targets`: a, b, c, c=, c+, s, s+, t. */
  key: string;
  name: string;
  url: string;
  headers: Record<string, string>;
  content: string;
}

interface Figures {
  rps1: number;
  p50_1: number;
  p99_1: number;
  rps50: number;
  p50_50: number;
  p99_50: number;
  ttfb: number;
  /** The server process's CPU (user + system) per request at 50 connections, in µs: steadier than req/s on a shared machine. */
  cpu50: number;
  /** The part of it on the main thread (the JavaScript); the rest is mostly V8's garbage-collection helpers. */
  cpuMain50: number;
}

/** Requests each target served (by URL), so a CPU profile's busy time can be put per request. */
const served = new Map<string, number>();
const countServed = (target: Target, n: number) => served.set(target.url, (served.get(target.url) ?? 0) + n);

const bodyFor = (target: Target, stream: boolean) =>
  JSON.stringify({ model: 'conductor', messages: [{ role: 'user', content: target.content }], max_tokens: 16, stream });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** One connection, one request after another, for `seconds`: exact per-request latencies. */
async function sequential(
  target: Target,
  stream: boolean,
  seconds: number,
): Promise<{ rps: number; p50: number; p99: number; firstByte: number }> {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
  const body = bodyFor(target, stream);
  const latencies: number[] = [];
  const firstBytes: number[] = [];
  const end = performance.now() + seconds * 1000;
  try {
    while (performance.now() < end) {
      const t0 = performance.now();
      const res = await request(`${target.url}/v1/chat/completions`, { method: 'POST', headers: target.headers, body, dispatcher: agent });
      if (res.statusCode !== 200) throw new Error(`${target.name}: HTTP ${res.statusCode} ${await res.body.text()}`);
      let first = true;
      for await (const _ of res.body) {
        if (first) firstBytes.push(performance.now() - t0);
        first = false;
      }
      latencies.push(performance.now() - t0);
    }
  } finally {
    await agent.close();
  }
  countServed(target, latencies.length);
  latencies.sort((x, y) => x - y);
  firstBytes.sort((x, y) => x - y);
  return {
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    firstByte: percentile(firstBytes, 50),
  };
}

/** CPU seconds (user + system) a process has used, from /proc (clock ticks of 10 ms): in all, and of its main thread. */
function cpuSeconds(pid: number): { all: number; main: number } {
  const seconds = (stat: string) => {
    const fields = readFileSync(stat, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  return { all: seconds(`/proc/${pid}/stat`), main: seconds(`/proc/${pid}/task/${pid}/stat`) };
}

/** What one window at 50 connections gave: requests in all and per second, latencies in ms. */
interface Load {
  total: number;
  rps: number;
  p50: number;
  p99: number;
}

/** wrk on PATH (the load generator the issue measured with, in C: it leaves the cores to the servers), else autocannon. */
const WRK = process.argv.includes('--autocannon') ? undefined : spawnSync('wrk', ['--version']).error ? undefined : 'wrk';

/** The Lua script wrk runs: the request, then one JSON line of what it saw. */
function wrkScript(target: Target): string {
  const headers = Object.entries(target.headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n');
  return `wrk.method = "POST"
wrk.body = ${JSON.stringify(bodyFor(target, false))}
${headers}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"total":%d,"us":%d,"errors":"connect %d, read %d, write %d, timeout %d","failed":%d,"non2xx":%d,"p50":%f,"p99":%f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

async function load(target: Target, seconds: number): Promise<Load> {
  const url = `${target.url}/v1/chat/completions`;
  if (!WRK) {
    const result = await autocannon({
      url,
      method: 'POST',
      connections: 50,
      duration: seconds,
      headers: target.headers,
      body: bodyFor(target, false),
    });
    if (result.non2xx || result.errors)
      throw new Error(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors at 50 connections`);
    return { total: result.requests.total, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
  }
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-wrk-'));
  const script = join(dir, 'chat.lua');
  writeFileSync(script, wrkScript(target));
  try {
    const out = await new Promise<string>((done, fail) => {
      // A generous timeout: a loaded machine's p99 is not a failure.
      const proc = spawn(WRK, ['-t1', '-c50', `-d${seconds}s`, '--timeout', '30s', '-s', script, url], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let text = '';
      proc.stdout.on('data', (c: Buffer) => (text += c.toString()));
      proc.once('error', fail);
      proc.once('exit', (code) => (code === 0 ? done(text) : fail(new Error(`wrk exited with ${code}`))));
    });
    const line = out.split('\n').find((l) => l.startsWith('RESULT '));
    if (!line) throw new Error(`${target.name}: wrk printed no result:\n${out}`);
    const r = JSON.parse(line.slice('RESULT '.length)) as {
      total: number;
      us: number;
      errors: string;
      failed: number;
      non2xx: number;
      p50: number;
      p99: number;
    };
    if (r.non2xx || r.failed) throw new Error(`${target.name}: ${r.non2xx} non-2xx, socket errors (${r.errors}) at 50 connections`);
    return { total: r.total, rps: r.total / (r.us / 1e6), p50: r.p50 / 1000, p99: r.p99 / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function concurrent(
  target: Target,
  seconds: number,
  pid: number,
): Promise<{ rps: number; p50: number; p99: number; cpu: number; cpuMain: number }> {
  const cpuBefore = cpuSeconds(pid);
  const result = await load(target, seconds);
  const cpuAfter = cpuSeconds(pid);
  countServed(target, result.total);
  const perRequest = (before: number, after: number) => ((after - before) / result.total) * 1e6;
  return {
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    cpu: perRequest(cpuBefore.all, cpuAfter.all),
    cpuMain: perRequest(cpuBefore.main, cpuAfter.main),
  };
}

/** `count` requests at 50 connections; the seconds they took. */
async function soakFor(target: Target, count: number): Promise<number> {
  const t0 = performance.now();
  const result = await autocannon({
    url: `${target.url}/v1/chat/completions`,
    method: 'POST',
    connections: 50,
    amount: count,
    headers: target.headers,
    body: bodyFor(target, false),
  });
  if (result.non2xx || result.errors) throw new Error(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors in the soak`);
  countServed(target, result.requests.total);
  return (performance.now() - t0) / 1000;
}

/** Every figure, or (`oneOnly`) just those at 1 connection, the rest NaN. */
async function measure(target: Target, oneOnly: boolean, pid: number, seconds: number): Promise<Figures> {
  const one = await sequential(target, false, seconds);
  if (oneOnly)
    return { rps1: one.rps, p50_1: one.p50, p99_1: one.p99, rps50: NaN, p50_50: NaN, p99_50: NaN, ttfb: NaN, cpu50: NaN, cpuMain50: NaN };
  const many = await concurrent(target, seconds, pid);
  const streamed = await sequential(target, true, Math.min(seconds, STREAMED_SECONDS));
  return {
    rps1: one.rps,
    p50_1: one.p50,
    p99_1: one.p99,
    rps50: many.rps,
    p50_50: many.p50,
    p99_50: many.p99,
    ttfb: streamed.firstByte,
    cpu50: many.cpu,
    cpuMain50: many.cpuMain,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)];
}

/** `--name value` from the command line, or the default. */
function option(name: string, fallback: string): string;
function option(name: string): string | undefined;
function option(name: string, fallback?: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
}

/**
 * `ref` built in a temporary worktree (node_modules linked from this tree): the base of a
 * comparison, measured in the same run. Removed when the bench exits.
 */
function buildBase(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-base-'));
  execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: REPO_ROOT, stdio: 'ignore' });
  process.on('exit', () => {
    spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: REPO_ROOT, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build failed for ${ref}`);
  return dir;
}

/** A target of the run: what it is, and how to start the process behind it. */
interface TargetSpec {
  key: string;
  name: string;
  content: string;
  /** Measured at 1 connection only. */
  oneOnly?: boolean;
  /** Which of the process's keys the requests carry (credits on): `key`, or `cappedKey` (a key with a credit cap). */
  keyOf?: 'key' | 'cappedKey';
  /** The process behind the target; two targets may share one (the same promise). */
  start(): Promise<Started>;
}

async function main(): Promise<void> {
  const started = performance.now();
  const runs = Number(option('--runs', String(DEFAULT_RUNS)));
  const seconds = Number(option('--seconds', String(DEFAULT_SECONDS)));
  const soakRequests = Number(option('--soak', String(DEFAULT_SOAK_REQUESTS)));
  const reportOnly = process.argv.includes('--report-only');
  const baseRef = option('--base');
  const cpuProfDir = option('--cpu-prof');
  const only = option('--targets')?.split(',');
  if (!(runs >= 1 && seconds > 0 && soakRequests >= 0)) throw new Error('--runs, --seconds and --soak take positive numbers');
  if (runs < DEFAULT_RUNS || seconds < DEFAULT_SECONDS) {
    console.log(`note: ${runs} runs of ${seconds} s; differences of a few percent need ≥ ${DEFAULT_RUNS} runs of ≥ ${DEFAULT_SECONDS} s`);
  }
  if (!process.argv.includes('--no-build')) {
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed: the bench measures the compiled gateway in dist/');
  }
  const baseRoot = baseRef ? buildBase(baseRef) : undefined;
  const upstream = await startRole('upstream');
  const upstreamBase = upstream.info.url;
  const gateway =
    (mode: GatewayMode, root = REPO_ROOT) =>
    () =>
      startGateway(upstreamBase, mode, root, cpuProfDir);
  const free: GatewayMode = { credits: false, tools: 'none' };
  const say = 'Say hello.';
  const helpers: Started[] = [];
  let creditsOn: Promise<Started> | undefined;
  const creditsGateway = () => (creditsOn ??= gateway({ credits: true, tools: 'none' })());
  const tracedGateway = async () => {
    const receiver = await startRole('receiver');
    helpers.push(receiver);
    return gateway({ ...free, traceTo: receiver.info.url })();
  };
  // One entry per target; a new one (tracing on, say) is one more line here and, if it has a target, one more check below.
  const specs: TargetSpec[] = [
    { key: 'a', name: '(a) upstream directly', content: say, start: async () => upstream },
    { key: 'b', name: '(b) bare Koa+undici proxy', content: say, start: () => startRole('proxy', [upstreamBase], cpuProfDir) },
    { key: 'c', name: '(c) Switchyard, no tool servers', content: say, start: gateway(free) },
    {
      key: 'c=',
      name: baseRoot ? `(c=) ${baseRef}, no tool servers` : '(c=) (c) again: noise floor',
      content: say,
      start: gateway(free, baseRoot ?? REPO_ROOT),
    },
    ...(baseRoot ? [{ key: 'c==', name: `(c==) ${baseRef} again: noise floor`, content: say, start: gateway(free, baseRoot) }] : []),
    { key: 'c+', name: '(c+) no tool servers, credits on', content: say, start: creditsGateway },
    { key: 'c+k', name: '(c+k) credits on, capped key', content: say, keyOf: 'cappedKey' as const, start: creditsGateway },
    { key: 'o', name: '(o) Switchyard, tracing on', content: say, start: tracedGateway },
    { key: 's', name: '(s) shipped tool servers', content: say, start: gateway({ credits: false, tools: 'shipped' }) },
    { key: 's+', name: '(s+) shipped, credits on', content: say, start: gateway({ credits: true, tools: 'shipped' }) },
    ...(baseRoot
      ? [{ key: 's=', name: `(s=) ${baseRef}, shipped`, content: say, start: gateway({ credits: false, tools: 'shipped' }, baseRoot) }]
      : []),
    {
      key: 't',
      name: '(t) one tool round',
      content: 'Please use a tool.',
      oneOnly: true,
      start: gateway({ credits: false, tools: 'echo' }),
    },
  ].filter((spec) => !only || spec.key === 'a' || spec.key === 'b' || only.includes(spec.key));
  const startedTargets = await Promise.all(specs.map((spec) => spec.start()));
  const children = [...new Set([upstream, ...startedTargets])];
  let exitCode = 0;
  try {
    const json = { 'content-type': 'application/json', 'x-wallet-address': WALLET };
    const targets: Target[] = specs.map((spec, i) => {
      const info = startedTargets[i].info;
      const url = spec.key === 'a' ? upstreamBase.replace(/\/v1$/, '') : info.url;
      return {
        key: spec.key,
        name: spec.name,
        url,
        headers: info.key ? { ...json, authorization: `Bearer ${info[spec.keyOf ?? 'key']}` } : json,
        content: spec.content,
      };
    });
    const pids = new Map(targets.map((t, i) => [t.key, startedTargets[i].child.pid!]));
    const oneOnly = new Set(specs.filter((s) => s.oneOnly).map((s) => s.key));
    for (const target of targets) await sequential(target, false, 0.5); // warm-up: JIT, sockets, caches
    const idle = new Map(targets.map((t) => [t.key, rssMb(pids.get(t.key)!)]));
    const peaks = new Map(idle);
    const measured = new Map<string, Figures[]>(targets.map((t) => [t.key, []]));
    for (let run = 0; run < runs; run++) {
      // Every other run in reverse, so no target always follows the same one.
      for (const target of run % 2 ? [...targets].reverse() : targets) {
        const pid = pids.get(target.key)!;
        const { result, peak } = await peakRss(pid, () => measure(target, oneOnly.has(target.key), pid, seconds));
        measured.get(target.key)!.push(result);
        peaks.set(target.key, Math.max(peaks.get(target.key)!, peak));
      }
    }
    const keys: Array<keyof Figures> = ['rps1', 'p50_1', 'p99_1', 'rps50', 'p50_50', 'p99_50', 'ttfb', 'cpu50', 'cpuMain50'];
    const figures = new Map<string, Figures>();
    for (const [key, list] of measured) {
      figures.set(key, Object.fromEntries(keys.map((k) => [k, median(list.map((f) => f[k]))])) as unknown as Figures);
    }
    const f = (key: string) => figures.get(key);
    /** The median over the runs of a per-run ratio, with its lowest and highest: the spread a single run would show. */
    const perRun = (key: string, against: string, pick: (f: Figures) => number) => {
      const mine = measured.get(key)!;
      const theirs = measured.get(against)!;
      const ratios = mine.map((m, i) => pick(m) / pick(theirs[i]));
      return { median: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios) };
    };
    const spread = (r: { median: number; low: number; high: number }) =>
      runs > 1 ? `${r.median.toFixed(2)}× (runs ${r.low.toFixed(2)}–${r.high.toFixed(2)})` : `${r.median.toFixed(2)}×`;

    const fmt = (n: number, digits = 2) => (Number.isNaN(n) ? '-' : n.toFixed(digits)).padStart(8);
    console.log(
      `\nchat overhead, zero-latency upstream, median of ${runs} interleaved runs (${seconds} s windows, ${WRK ?? 'autocannon'} at 50 connections); latencies in ms`,
    );
    console.log(
      `${'target'.padEnd(36)}  req/s@1  p50@1  p99@1  req/s@50 p50@50 p99@50  TTFB(stream) RSS idle/peak MB  CPU µs/req@50 (main thread)  CPU × (b)`,
    );
    const b = f('b')!;
    for (const target of targets) {
      const t = f(target.key)!;
      const rss = `${idle.get(target.key)!.toFixed(0)}/${peaks.get(target.key)!.toFixed(0)}`;
      console.log(
        `${target.name.padEnd(36)}${fmt(t.rps1, 0)}${fmt(t.p50_1, 3)}${fmt(t.p99_1, 3)}${fmt(t.rps50, 0)}${fmt(t.p50_50, 1)}${fmt(t.p99_50, 1)}${fmt(t.ttfb, 3)}${rss.padStart(15)}${fmt(t.cpu50, 0)}${`(${fmt(t.cpuMain50, 0).trim()})`.padStart(8)}${fmt(t.cpu50 / b.cpu50, 2)}`,
      );
    }
    const signed = (ms: number) => `${ms < 0 ? '−' : '+'}${Math.abs(ms).toFixed(3)}`;
    const checks: Array<[string, boolean]> = [];
    const check = (what: string, met: boolean) => checks.push([what, met]);

    console.log('\nCPU per request at 50 connections against the bare proxy (b), per-run ratios');
    for (const target of targets) {
      if (target.key === 'a' || target.key === 'b' || oneOnly.has(target.key)) continue;
      const t = f(target.key)!;
      const others = (x: Figures) => (x.cpu50 - x.cpuMain50).toFixed(0);
      console.log(
        `  ${target.name.padEnd(36)} ${spread(perRun(target.key, 'b', (x) => x.cpu50))}; ${t.cpu50.toFixed(0)} µs against ${b.cpu50.toFixed(0)} µs ` +
          `(main thread ${(t.cpuMain50 / b.cpuMain50).toFixed(2)}×; other threads ${others(t)} µs against ${others(b)} µs); ` +
          `p50 @1 ${signed(t.p50_1 - b.p50_1)} ms over (b); TTFB ${signed(t.ttfb - b.ttfb)} ms`,
      );
    }

    const c = f('c');
    const copy = f('c=');
    if (c && copy) {
      const cpu = perRun('c', 'c=', (x) => x.cpu50);
      const rps = perRun('c', 'c=', (x) => x.rps50);
      console.log(baseRoot ? `\nthis tree (c) against ${baseRef} (c=), same run` : '\nself-comparison: (c=) is the same tree as (c)');
      console.log(`  (c) / (c=): CPU per request ${spread(cpu)}, throughput @50 ${spread(rps)}, p50 @1 ${signed(c.p50_1 - copy.p50_1)} ms`);
      const twin = f('c==');
      if (twin) {
        const floor = perRun('c==', 'c=', (x) => x.cpu50);
        console.log(
          `  noise floor, ${baseRef} against itself: CPU per request ${spread(floor)}, p50 @1 ${signed(twin.p50_1 - copy.p50_1)} ms`,
        );
      } else {
        console.log(
          `  noise floor: a difference of CPU per request within ±${(Math.max(cpu.high - 1, 1 - cpu.low) * 100).toFixed(1)}% is not one this run can see`,
        );
      }
    }

    const shippedBase = f('s=');
    if (f('s') && shippedBase) {
      const shipped = perRun('s', 's=', (x) => x.cpu50);
      console.log(
        `\nthis tree (s) against ${baseRef} (s=), the shipped tool servers: CPU per request ${spread(shipped)}, p50 @1 ${signed(f('s')!.p50_1 - shippedBase.p50_1)} ms`,
      );
    }

    const addedOverProxy = (x: Figures) => x.p50_1 - b.p50_1;
    if (c) {
      check(
        `(c) CPU per request ${(c.cpu50 / b.cpu50).toFixed(2)}× the proxy's ≤ ${TARGETS.cpuRatio}×`,
        c.cpu50 <= TARGETS.cpuRatio * b.cpu50,
      );
      check(
        `(c) added p50 @1 ${signed(addedOverProxy(c))} ms over the proxy ≤ +${TARGETS.addedP50Ms} ms`,
        addedOverProxy(c) <= TARGETS.addedP50Ms,
      );
    }
    const s = f('s');
    if (s) {
      const allowed = TARGETS.cpuRatio * b.cpu50 + TARGETS.shippedExtraUs;
      check(
        `(s) CPU per request ${s.cpu50.toFixed(0)} µs ≤ ${TARGETS.cpuRatio}× the proxy's + ${TARGETS.shippedExtraUs} µs = ${allowed.toFixed(0)} µs`,
        s.cpu50 <= allowed,
      );
      check(
        `(s) added p50 @1 ${signed(addedOverProxy(s))} ms over the proxy ≤ +${TARGETS.addedP50Ms} ms`,
        addedOverProxy(s) <= TARGETS.addedP50Ms,
      );
    }
    const paid = f('s+');
    if (s && paid) {
      check(
        `(s+) throughput @50 ${(paid.rps50 / s.rps50).toFixed(2)}× free mode (s) ≥ ${TARGETS.creditsThroughput}×`,
        paid.rps50 >= TARGETS.creditsThroughput * s.rps50,
      );
      console.log(
        `\n(s+) against (s): added p50 @1 ${signed(paid.p50_1 - s.p50_1)} ms (goal ≤ +${TARGETS.addedP50Ms} ms); TTFB ${signed(paid.ttfb - s.ttfb)} ms`,
      );
    }
    const paidPlain = f('c+');
    if (c && paidPlain) {
      console.log(
        `(c+) against (c): throughput @50 ${(paidPlain.rps50 / c.rps50).toFixed(2)}×, added p50 @1 ${signed(paidPlain.p50_1 - c.p50_1)} ms`,
      );
    }
    const capped = f('c+k');
    if (capped && paidPlain) {
      console.log(
        `(c+k) against (c+): throughput @50 ${(capped.rps50 / paidPlain.rps50).toFixed(2)}×; CPU per request ${(capped.cpu50 / paidPlain.cpu50).toFixed(2)}×; ` +
          `added p50 @1 ${signed(capped.p50_1 - paidPlain.p50_1)} ms`,
      );
    }
    const traced = f('o');
    if (traced && c) {
      const tracedUrl = targets.find((t) => t.key === 'o')!.url;
      const tracing = (
        (await (await fetch(`${tracedUrl}/health`)).json()) as { tracing: { exported_spans: number; dropped_spans: number } }
      ).tracing;
      const addedCpu = traced.cpu50 - c.cpu50;
      console.log(`\n(o) tracing on, against free mode (c) of this run`);
      console.log(
        `  CPU per request @50: +${addedCpu.toFixed(0)} µs = ${((addedCpu / c.cpu50) * 100).toFixed(1)} % of free mode's (goal ≤ 10 %); ` +
          `throughput ${(traced.rps50 / c.rps50).toFixed(2)} ×`,
      );
      console.log(`  spans exported ${tracing.exported_spans}, dropped ${tracing.dropped_spans} (must be 0)`);
    }
    const toolRound = f('t');
    if (toolRound) console.log(`\n(t) one tool round: p50 @1 ${toolRound.p50_1.toFixed(3)} ms (two upstream calls + one MCP call)`);

    const soakKey = paid ? 's+' : undefined;
    if (soakKey && soakRequests > 0) {
      const soakTarget = targets.find((t) => t.key === soakKey)!;
      const pid = pids.get(soakKey)!;
      const before = rssMb(pid);
      const soak = await peakRss(pid, () => soakFor(soakTarget, soakRequests));
      const after = rssMb(pid);
      console.log(`\nmemory soak, ${soakTarget.name}: ${soakRequests} requests at 50 connections in ${soak.result.toFixed(1)} s`);
      console.log(`  RSS after warm-up ${before.toFixed(0)} MB, peak ${soak.peak.toFixed(0)} MB, at the end ${after.toFixed(0)} MB`);
      check(`soak: RSS at the end ${after.toFixed(0)} MB ≤ ${TARGETS.soakMb} MB`, after <= TARGETS.soakMb);
      check(`soak: end / warm-up ${(after / before).toFixed(2)}× ≤ ${TARGETS.soakGrowth}×`, after / before <= TARGETS.soakGrowth);
    }

    if (cpuProfDir) {
      console.log(
        `\nCPU profiles in ${cpuProfDir}, CPU.<date>.<time>.<pid>.*.cpuprofile (bench/profile-summary.ts --requests N sums one up):`,
      );
      for (const t of targets.slice(1)) console.log(`  pid ${pids.get(t.key)}: ${t.name}, ${served.get(t.url) ?? 0} requests served`);
    }
    console.log('\ntargets (issue 39):');
    for (const [what, met] of checks) console.log(`  ${met ? 'met   ' : 'MISSED'}  ${what}`);
    if (checks.some(([, met]) => !met) && !reportOnly) exitCode = 1;
    console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await Promise.all(
      [...children, ...helpers].map(
        (c) =>
          new Promise<void>((done) => {
            if (c.child.exitCode !== null) return done();
            c.child.once('exit', () => done());
            c.child.kill('SIGTERM');
          }),
      ),
    );
  }
  process.exitCode = exitCode;
}

const roleAt = process.argv.indexOf('--role');
if (roleAt !== -1) await child(process.argv[roleAt + 1], process.argv.slice(roleAt + 2));
else await main();
