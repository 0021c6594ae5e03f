/**
 * GET /credits/balance with a valid key (wallet header + Bearer key → key lookup in SQLite →
 * one read of the wallet's record, without the wallet's lock) at 50 connections, against GET /health (no auth, no store)
 * in the same run. Prints requests/s, latency and the ratio. Loopback only; ~25 s.
 *
 *   npx tsx bench/credits-balance.ts [seconds-per-phase]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { parseConfig } from '../gateway/config.js';
import { startGateway } from '../gateway/server.js';

const seconds = Number(process.argv[2] ?? 10);
const WALLET = '0x52908400098527886e0f7030069857d2e4169ee7';

async function measure(title: string, url: string, headers: Record<string, string>): Promise<autocannon.Result> {
  const result = await autocannon({ url, connections: 50, duration: seconds, headers });
  const errors = result.errors + result.non2xx;
  console.log(
    `${title.padEnd(22)} ${result.requests.average.toFixed(0).padStart(7)} req/s  ` +
      `p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  (${result.requests.total} requests, ${errors} errors/non-2xx)`,
  );
  return result;
}

const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
const config = parseConfig(
  {
    server: { port: 0, host: '127.0.0.1' },
    logLevel: 'warn',
    // The bench measures the path, not the rate limiter.
    limits: { perWallet: { points: 1_000_000_000, durationSec: 1 }, perIp: { points: 1_000_000_000, durationSec: 1 } },
    models: [{ id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } }],
    mcpServers: {},
  },
  { DATA_DIR: dataDir },
);
const gateway = await startGateway(config, {}, { logDestination: { write: () => {} } });
try {
  const { key } = await gateway.apiKeys.create({ address: WALLET, name: 'bench', verified: true });
  await gateway.ledger.grant(WALLET, 1_000);
  console.log(`50 connections, ${seconds} s per phase, free mode off, SQLite store in ${dataDir}`);
  const health = await measure('GET /health', `${gateway.url}/health`, {});
  const balance = await measure('GET /credits/balance', `${gateway.url}/credits/balance`, {
    'x-wallet-address': WALLET,
    authorization: `Bearer ${key}`,
  });
  console.log(
    `ratio balance/health: ${(balance.requests.average / health.requests.average).toFixed(2)} (throughput), ` +
      `${(balance.latency.p50 / Math.max(health.latency.p50, 0.001)).toFixed(2)}× p50 latency`,
  );
} finally {
  await gateway.close();
  rmSync(dataDir, { recursive: true, force: true });
}
