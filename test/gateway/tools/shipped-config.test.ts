import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../gateway/config.js';
import { resolveServer } from '../../../gateway/tools/server-supervisor.js';
import { createToolHost } from '../../../gateway/tools/tool-host.js';
import { capturingLogger, fixtureServer, isAlive, runnableEnv } from './fixture-servers.js';

const FAMILIES = ['onchain', 'web', 'knowledge', 'utility'];

function shippedConfig(env: Record<string, string>) {
  return parseConfig(JSON.parse(readFileSync('config/gateway.json', 'utf8')), env);
}

/** The env suffixes of the shipped chains (`ETHEREUM`, …), which `<CHAIN>` in README stands for. */
function shippedChainSuffixes(): string[] {
  const chains = JSON.parse(readFileSync('config/chains.json', 'utf8')) as { chains: Record<string, unknown> };
  return Object.keys(chains.chains).map((key) => key.toUpperCase().replace(/-/g, '_'));
}

/** A chain an operator adds: not in the shipped list, so only a prefix can forward its variables. */
const ADDED_CHAIN = 'ZKSYNC';

/** `RPC_URL_<CHAIN>` → one name per shipped chain and one for the added chain. */
function perChainNames(pattern: string): string[] {
  return [...shippedChainSuffixes(), ADDED_CHAIN].map((chain) => pattern.replace('<CHAIN>', chain));
}

/**
 * Variables README documents per tool server: table rows `| (<server> server) | \`VAR\` | …`,
 * with the second of `` `A` / `B` `` rows and `<CHAIN>` expanded over the shipped chains and one added chain.
 */
function documentedVariables(): Map<string, string[]> {
  const byServer = new Map<string, string[]>();
  const row = /^\|\s*\((\w+) server\)\s*\|\s*`([A-Z][A-Z0-9_]*(?:<CHAIN>)?)`(?:\s*\/\s*`([A-Z][A-Z0-9_]*(?:<CHAIN>)?)`)?/gm;
  for (const match of readFileSync('docs/configuration.md', 'utf8').matchAll(row)) {
    const [, server, ...named] = match;
    const variables = named
      .filter((name): name is string => name !== undefined)
      .flatMap((name) => (name.endsWith('<CHAIN>') ? perChainNames(name) : [name]));
    byServer.set(server, [...(byServer.get(server) ?? []), ...variables]);
  }
  return byServer;
}

test('the shipped config runs each family server from dist with node', () => {
  const config = shippedConfig({});
  assert.deepEqual(Object.keys(config.mcpServers).sort(), [...FAMILIES].sort());
  for (const family of FAMILIES) {
    const server = config.mcpServers[family];
    assert.ok('command' in server);
    assert.equal(server.command, 'node');
    assert.deepEqual(server.args, [`dist/tool-servers/${family}/main.js`]);
    assert.equal(server.disabled, false);
    assert.equal(server.prefix, '');
  }
});

test('the shipped config passes each server every variable README documents for it, and nothing else of the gateway', () => {
  const documented = documentedVariables();
  for (const server of documented.keys())
    assert.ok(FAMILIES.includes(server), `README documents variables for an unknown server "${server}"`);
  // The row parser itself: per-chain rows expand, and the second of "`A` / `B`" counts.
  const perChain = ['RPC_URL_LOCAL', 'TOKENS_BASE', 'MULTICALL3_SEPOLIA', 'ENS_UNIVERSAL_RESOLVER_POLYGON', `RPC_URL_${ADDED_CHAIN}`];
  for (const variable of perChain) assert.ok(documented.get('onchain')?.includes(variable), variable);
  assert.ok(documented.get('web')?.includes('BRAVE_BASE_URL'));
  const env: Record<string, string> = {
    ...runnableEnv(),
    GATEWAY_ONLY_SECRET: 'never-forwarded',
    UPSTREAM_API_KEY: 'upstream-secret',
    TRACE_WALLET_HMAC_SECRET: 'the-gateway-only-tracing-secret',
    LOG_LEVEL: 'trace', // a real level: the gateway's own config checks it too
    // Tracing's standard variables reach every server by prefix (docs/configuration.md#tracing).
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=fixture',
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false',
  };
  for (const variables of documented.values()) for (const variable of variables) env[variable] = `fixture-${variable}`;
  const config = shippedConfig(env);
  for (const family of FAMILIES) {
    const resolved = resolveServer(family, config.mcpServers[family], env);
    assert.equal(resolved.kind, 'stdio');
    if (resolved.kind !== 'stdio') continue;
    for (const variable of documented.get(family) ?? []) {
      assert.equal(resolved.env[variable], `fixture-${variable}`, `${variable} must reach the ${family} server`);
    }
    assert.equal(resolved.env.LOG_LEVEL, 'trace', `LOG_LEVEL must reach the ${family} server`);
    for (const name of [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
    ]) {
      assert.equal(resolved.env[name], env[name], `${name} must reach the ${family} server`);
    }
    assert.equal(resolved.env.TRACE_WALLET_HMAC_SECRET, undefined);
    assert.equal(resolved.env.GATEWAY_ONLY_SECRET, undefined);
    assert.equal(resolved.env.UPSTREAM_API_KEY, undefined);
    assert.equal(resolved.env.PATH, process.env.PATH);
    // A server's documented variables reach it, and no other server's do (prefixes included).
    const foreign = [...documented].filter(([server]) => server !== family).flatMap(([, variables]) => variables);
    for (const variable of foreign) assert.equal(resolved.env[variable], undefined, `${variable} must not reach the ${family} server`);
  }
});

test('a chain added to the chain list is served once its RPC_URL_<KEY> is set, without editing the shipped config', async (t) => {
  const rpc = await startJsonRpcNode({ eth_getBalance: '0xde0b6b3a7640000' });
  const scratch = mkdtempSync(join(tmpdir(), 'switchyard-chain-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  t.after(() => rpc.close());
  const chainsPath = join(scratch, 'chains.json');
  // The file's own URL refuses connections: only the forwarded RPC_URL_ZKSYNC can answer.
  const zksync = { id: 324, name: 'zkSync Era', native_symbol: 'ETH', block_time_ms: 1000, rpc_urls: ['http://127.0.0.1:9'] };
  writeFileSync(chainsPath, JSON.stringify({ chains: { zksync } }));
  const env = runnableEnv({ CHAINS_CONFIG: chainsPath, [`RPC_URL_${ADDED_CHAIN}`]: rpc.url });
  const { logger } = capturingLogger();
  const host = createToolHost({ servers: { onchain: shippedConfig(env).mcpServers.onchain }, env, logger });
  try {
    await host.start();
    const address = '0x000000000000000000000000000000000000dEaD';
    const result = await host.callTool('get_eth_balance', { address, chain: 'zksync' });
    assert.deepEqual(result, { address, balance_wei: '1000000000000000000', balance_eth: '1', chain: 'zkSync Era' });
    assert.deepEqual(rpc.calls, [{ method: 'eth_getBalance', params: [address, 'latest'] }]);
  } finally {
    await host.close();
  }
});

/** A loopback JSON-RPC node that answers each listed method with a fixed result and records the calls. */
async function startJsonRpcNode(results: Record<string, unknown>) {
  const calls: Array<{ method: string; params: unknown }> = [];
  const answer = (call: { id: unknown; method: string; params?: unknown }) => {
    calls.push({ method: call.method, params: call.params });
    if (call.method in results) return { jsonrpc: '2.0', id: call.id, result: results[call.method] };
    return { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: `method ${call.method} not found` } };
  };
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const parsed = JSON.parse(body) as Parameters<typeof answer>[0] | Array<Parameters<typeof answer>[0]>;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, calls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

test('with the shipped config every family server starts under the host and stops with it', async () => {
  const { logger } = capturingLogger();
  const env = runnableEnv();
  const host = createToolHost({ servers: shippedConfig(env).mcpServers, env, logger });
  try {
    await host.start();
    const health = host.health();
    assert.deepEqual(
      health.fields.tool_servers.map((s) => [s.name, s.status]),
      FAMILIES.map((name) => [name, 'up']),
    );
    assert.equal(health.degraded, false);
    const pids = FAMILIES.map((name) => host.server(name)!.pid!);
    await host.close();
    assert.deepEqual(pids.filter(isAlive), []);
  } finally {
    await host.close();
  }
});

test('the built gateway exits 1 naming both servers when two offer one tool name', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'switchyard-dup-'));
  try {
    const config = JSON.parse(readFileSync('config/gateway.json', 'utf8')) as Record<string, unknown>;
    config.mcpServers = { first: fixtureServer('echo'), second: fixtureServer('duplicate') };
    config.server = { port: 0, host: '127.0.0.1' };
    const path = join(scratch, 'gateway.json');
    writeFileSync(path, JSON.stringify(config));
    const child = spawn(process.execPath, ['dist/gateway/main.js'], {
      env: { ...runnableEnv(), SWITCHYARD_CONFIG: path, DATA_DIR: join(scratch, 'data'), LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
    assert.equal(code, 1);
    assert.equal(
      stderr.trim(),
      'switchyard: failed to start: Tool "echo" is offered by both "first" and "second". Give one of them a "prefix" in mcpServers (e.g. "prefix": "second_").',
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('with tracing on, the host names each shipped server <gateway>-<server> for its spans', () => {
  const config = shippedConfig({});
  const { logger } = capturingLogger();
  const host = createToolHost({ servers: config.mcpServers, env: runnableEnv(), logger, tracedAs: 'switchyard-eu' });
  for (const family of FAMILIES) assert.equal(host.server(family)?.spawnEnv?.OTEL_SERVICE_NAME, `switchyard-eu-${family}`);
  const untraced = createToolHost({ servers: config.mcpServers, env: runnableEnv(), logger });
  for (const family of FAMILIES) assert.equal(untraced.server(family)?.spawnEnv?.OTEL_SERVICE_NAME, undefined);
});
