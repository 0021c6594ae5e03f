/**
 * Start the real gateway on an ephemeral 127.0.0.1 port with a test config, capture its log
 * lines, and stop it afterwards. Every gateway test starts it through here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Env } from '../../gateway/config.js';
import { startGateway, type RunningGateway } from '../../gateway/server.js';

export const WALLET = '0x52908400098527886e0f7030069857d2e4169ee7'; // lower-case form of an EIP-55 test vector
export const WALLET_CHECKSUMMED = '0x52908400098527886E0F7030069857D2E4169EE7';

export interface TestGateway extends RunningGateway {
  /** Every JSON log line written so far, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Raw log text, for redaction checks. */
  rawLogs(): string;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * A config that starts quickly: no tool servers, upstreams on an unused port. Free mode is on, so
 * tests that are not about keys need only the wallet header; tests of auth or charging set
 * `json.freeMode = false` and use `apiKeyFor`/`authHeaders`.
 */
export function baseConfigJson(): Record<string, unknown> {
  return {
    server: { port: 0, host: '127.0.0.1' },
    freeMode: true,
    logLevel: 'info',
    models: [
      { id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'qwen3:32b' } },
      { id: 'svc-8b-operator', alias: 'operator', upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'qwen3:8b' } },
    ],
    mcpServers: {},
  };
}

export async function startTestGateway(
  options: { config?: (json: Record<string, unknown>) => void; env?: Env; dataDir?: string } = {},
): Promise<TestGateway> {
  const json = baseConfigJson();
  options.config?.(json);
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const ownsDataDir = options.dataDir === undefined;
  const config = parseConfig(json, { DATA_DIR: dataDir, ...options.env });
  const lines: string[] = [];
  const gateway = await startGateway(
    config,
    { ...options.env },
    {
      logDestination: { write: (line: string) => void lines.push(line) },
    },
  );
  return {
    ...gateway,
    dataDir,
    get logs() {
      return lines.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    rawLogs: () => lines.join(''),
    async stop() {
      await gateway.close();
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Headers every wallet-gated request needs. */
export function walletHeaders(wallet = WALLET, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-wallet-address': wallet, 'content-type': 'application/json', ...extra };
}

/** A verified API key for `wallet`, minted straight in the gateway's store (no SIWE round trip). */
export async function apiKeyFor(gateway: RunningGateway, wallet = WALLET, name = 'test'): Promise<string> {
  const { key } = await gateway.apiKeys.create({ address: wallet, name, verified: true });
  return key;
}

let fundedWallets = 0;
/**
 * A wallet no other call of this test process returned (lower-case hex: no checksum to get right),
 * granted `credits` (none when 0), with a verified key minted straight in the store.
 */
export async function fundedWallet(gateway: RunningGateway, credits = 100): Promise<{ wallet: string; key: string; keyId: string }> {
  fundedWallets++;
  const wallet = `0x${fundedWallets.toString(16).padStart(4, '0')}${'ab'.repeat(18)}`;
  if (credits > 0) await gateway.ledger.grant(wallet, credits);
  const { key, record } = await gateway.apiKeys.create({ address: wallet, name: 'test', verified: true });
  return { wallet, key, keyId: record.id };
}

/** walletHeaders plus `Authorization: Bearer <key>`. */
export function authHeaders(key: string, wallet = WALLET, extra: Record<string, string> = {}): Record<string, string> {
  return walletHeaders(wallet, { authorization: `Bearer ${key}`, ...extra });
}

/** `POST /v1/tools/execute` in free mode: the status and the parsed body. */
export async function executeTool<Body = Record<string, unknown>>(
  gateway: { url: string },
  tool: string,
  args: Record<string, unknown>,
): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${gateway.url}/v1/tools/execute`, {
    method: 'POST',
    headers: walletHeaders(),
    body: JSON.stringify({ tool, args }),
  });
  return { status: response.status, body: (await response.json()) as Body };
}
