/**
 * HTTP overhead of the gateway: autocannon against `GET /v1/models` (wallet header, free mode) at
 * 50 connections, next to a bare Koa "hello" server measured the same way in the same run. Both
 * servers run as their own process (the built gateway from dist/, as `npm start` runs it), so the
 * load generator does not share their event loop. Absolute numbers depend on the machine; the
 * ratio is the figure to compare.
 *
 *   npm run build && npx tsx bench/http-models.ts [seconds per run, default 10]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = 50;
const WALLET = '0x52908400098527886e0f7030069857d2e4169ee7';

interface Figures {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Spawn a server process and resolve with its URL once it logs `"url":"http://…"`. */
function startProcess(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolveStart, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out); // the "gateway listening" line
      if (match) {
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // keep draining the request log
        resolveStart({ child, url: match[1] });
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

async function measure(name: string, url: string, headers: Record<string, string>): Promise<Figures> {
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers }); // warm-up (JIT, sockets)
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

const BARE_KOA = `
import Koa from 'koa';
const app = new Koa();
app.use((ctx) => { ctx.body = 'hello'; });
const server = app.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port })));
`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const configPath = join(dir, 'gateway.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      server: { port: 0, host: '127.0.0.1' },
      freeMode: true,
      // The bench is one client on one IP: lift the budgets so they measure cost, not limits.
      limits: { perIp: { points: 10_000_000, durationSec: 60 }, perWallet: { points: 10_000_000, durationSec: 60 } },
      models: [
        { id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'qwen3:32b' } },
        { id: 'svc-8b-operator', alias: 'operator', upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'qwen3:8b' } },
      ],
      mcpServers: {},
    }),
  );
  const children: ChildProcess[] = [];
  try {
    const bare = await startProcess(['--input-type=module', '-e', BARE_KOA], {});
    children.push(bare.child);
    const baseline = await measure('bare Koa "hello"', bare.url, {});
    bare.child.kill();

    const gateway = await startProcess([join(REPO_ROOT, 'dist/gateway/main.js')], {
      SWITCHYARD_CONFIG: configPath,
      DATA_DIR: join(dir, 'data'),
      PORT: '0',
    });
    children.push(gateway.child);
    const models = await measure('gateway GET /v1/models', `${gateway.url}/v1/models`, { 'x-wallet-address': WALLET });

    console.log(`\n${CONNECTIONS} connections, ${SECONDS} s per run (after a 2 s warm-up), loopback`);
    console.log('run                          req/s     p50 ms  p99 ms  non-2xx  errors');
    for (const f of [baseline, models]) {
      console.log(
        `${f.name.padEnd(28)} ${f.requestsPerSecond.toFixed(0).padStart(7)}  ${String(f.p50).padStart(7)} ${String(f.p99).padStart(7)}  ${String(f.non2xx).padStart(7)} ${String(f.errors).padStart(7)}`,
      );
    }
    console.log(`gateway / bare Koa throughput ratio: ${(models.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)}`);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
