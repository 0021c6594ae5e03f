/**
 * Tool-call overhead, in one run:
 *  1. the echo fixture tool through an in-process MCP client (SDK Client over stdio, the baseline),
 *     sequential and with 50 calls in flight: calls/s, p50, p99;
 *  2. the same tool through `POST /v1/tools/execute` on the built gateway (its own process,
 *     FREE_MODE=true, rate limits out of the way) with autocannon at 50 connections;
 *  3. their ratio, only when every request succeeded: any failed call or non-2xx answer makes the
 *     run exit 1 without a ratio (a fast error is not a fast tool call);
 *  4. start-up time to ready with the shipped config's four family servers connected (median of 3):
 *     spawn the built gateway, poll /health until every tool server is up.
 * Loopback only; absolute numbers depend on the machine (2 shared cores here), the ratio is the figure.
 *
 *   npm run build && npx tsx bench/tool-execute.ts [seconds per measured window, default 8, at least 5]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.argv[2] ?? 8);
// Shorter windows swing by tens of percent from run to run on a shared machine.
const MIN_SECONDS = 5;
if (!(SECONDS >= MIN_SECONDS)) {
  console.error(`bench/tool-execute: a window of ${process.argv[2]} s is too short to be stable; give at least ${MIN_SECONDS}.`);
  process.exit(2);
}
const CONNECTIONS = 50;
const WALLET = '0x52908400098527886e0f7030069857d2e4169ee7';
const ECHO = ['--import', 'tsx', 'test/fixtures/mcp/echo.ts'];

interface Figures {
  name: string;
  callsPerSecond: number;
  p50: number;
  p99: number;
  /** Calls that did not succeed (an isError result, a non-2xx answer, a connection error). */
  failed: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarize(name: string, latencies: number[], elapsedMs: number, failed: number): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { name, callsPerSecond: (latencies.length / elapsedMs) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99), failed };
}

/** Baseline: the SDK client talking to the echo fixture directly over stdio. */
async function inProcessClient(): Promise<Figures[]> {
  const transport = new StdioClientTransport({ command: process.execPath, args: ECHO, cwd: REPO_ROOT, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  let failed = 0;
  const call = async () => {
    const started = performance.now();
    const result = await client.callTool({ name: 'echo', arguments: { text: 'bench' } });
    if (result.isError) failed++;
    return performance.now() - started;
  };
  for (let i = 0; i < 500; i++) await call(); // warm-up
  failed = 0;

  const sequential: number[] = [];
  let started = performance.now();
  while (performance.now() - started < SECONDS * 1000) sequential.push(await call());
  const sequentialFigures = summarize('MCP client, sequential', sequential, performance.now() - started, failed);

  failed = 0;
  const concurrent: number[] = [];
  started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) concurrent.push(await call());
    }),
  );
  const concurrentFigures = summarize(`MCP client, ${CONNECTIONS} in flight`, concurrent, performance.now() - started, failed);
  await client.close();
  return [sequentialFigures, concurrentFigures];
}

/** A port the OS says is free right now (the gateway logs its URL only at info level). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/** Spawn the built gateway with a config file; resolve once it answers /health. */
async function startGateway(config: unknown, extraEnv: Record<string, string>): Promise<{ child: ChildProcess; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-tools-'));
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify(config));
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/gateway/main.js'], {
    cwd: REPO_ROOT,
    env: { ...process.env, SWITCHYARD_CONFIG: join(dir, 'gateway.json'), DATA_DIR: join(dir, 'data'), PORT: String(port), ...extraEnv },
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
      await new Promise((done) => setTimeout(done, 10));
    }
  }
}

async function stopGateway(gateway: { child: ChildProcess; dir: string }): Promise<void> {
  const exited = new Promise((done) => gateway.child.once('exit', done));
  gateway.child.kill('SIGTERM');
  await exited;
  rmSync(gateway.dir, { recursive: true, force: true });
}

function shippedConfig(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(REPO_ROOT, 'config/gateway.json'), 'utf8')) as Record<string, unknown>;
}

async function throughGateway(): Promise<Figures> {
  const config = shippedConfig();
  config.mcpServers = { echo: { command: process.execPath, args: ECHO } };
  config.limits = { perWallet: { points: 100_000_000, durationSec: 60 }, perIp: { points: 100_000_000, durationSec: 60 } };
  const gateway = await startGateway(config, { FREE_MODE: 'true', LOG_LEVEL: 'warn' });
  try {
    const options = {
      url: `${gateway.url}/v1/tools/execute`,
      method: 'POST' as const,
      connections: CONNECTIONS,
      headers: { 'x-wallet-address': WALLET, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'echo', args: { text: 'bench' } }),
    };
    await autocannon({ ...options, duration: 2 }); // warm-up
    const result = await autocannon({ ...options, duration: SECONDS });
    return {
      name: `POST /v1/tools/execute, ${CONNECTIONS} connections`,
      callsPerSecond: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      failed: result.non2xx + result.errors,
    };
  } finally {
    await stopGateway(gateway);
  }
}

/** Spawn → /health shows every tool server up, with the shipped config (four family servers). */
async function startupToReady(): Promise<number> {
  const started = performance.now();
  const gateway = await startGateway(shippedConfig(), { LOG_LEVEL: 'warn' });
  try {
    for (;;) {
      const health = (await (await fetch(`${gateway.url}/health`)).json()) as { tool_servers?: Array<{ status: string }> };
      const servers = health.tool_servers ?? [];
      if (servers.length === 4 && servers.every((s) => s.status === 'up')) return performance.now() - started;
      await new Promise((done) => setTimeout(done, 10));
    }
  } finally {
    await stopGateway(gateway);
  }
}

function row(f: Figures): string {
  return `${f.name.padEnd(44)} ${f.callsPerSecond.toFixed(0).padStart(8)} calls/s   p50 ${f.p50.toFixed(2).padStart(7)} ms   p99 ${f.p99.toFixed(2).padStart(7)} ms   failed ${f.failed}`;
}

console.log(`windows of ${SECONDS} s`);
const [sequential, concurrent] = await inProcessClient();
console.log(row(sequential));
console.log(row(concurrent));
const gatewayFigures = await throughGateway();
console.log(row(gatewayFigures));
const failures = [sequential, concurrent, gatewayFigures].filter((f) => f.failed > 0);
if (failures.length > 0) {
  console.log(`no ratio: calls failed in ${failures.map((f) => `"${f.name}" (${f.failed})`).join(', ')}`);
  process.exitCode = 1;
} else {
  console.log(
    `ratio gateway / in-process client (${CONNECTIONS} in flight): ${(gatewayFigures.callsPerSecond / concurrent.callsPerSecond).toFixed(2)}`,
  );
}
const startups: number[] = [];
for (let i = 0; i < 3; i++) startups.push(await startupToReady());
startups.sort((a, b) => a - b);
console.log(
  `start-up to ready with 4 family servers: median ${startups[1].toFixed(0)} ms (runs: ${startups.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
);
