import type { KeyLimits } from './ledger/key-budgets.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { Config, Env } from './config.js';
import { createApp } from './app.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { gracefulShutdown, type Closer } from './shutdown.js';
import { createToolHost, type ToolHost } from './tools/tool-host.js';
import type { KeyvStore } from './storage/sqlite/keyv-store.js';
import type { Ledger } from './ledger/ledger.js';
import type { ApiKeys } from './keys/api-keys.js';
import { SIWE_READ_POLICY } from './keys/siwe.js';
import { ChainClient } from '../chains/chain-client.js';
import { isClusterConfig, type Stores } from './stores/stores.js';
import { openEmbeddedStores } from './stores/embedded-stores.js';
import { openClusterStores } from './stores/cluster-stores.js';
import { createUpstreams, type Upstreams } from './chat/upstreams.js';
import { answerClientError, refuseConnect } from './http/client-error.js';
import { createDeposits } from './deposits/deposit-watchers.js';
import { createChainReader } from './deposits/chain-reader.js';
import { X402Payments } from './x402/payments.js';
import { settlementChains } from './x402/settlement-reads.js';
import { urlWithoutPassword } from './url-without-password.js';
import { startTracing } from './tracing/start-tracing.js';

export interface RunningGateway {
  config: Config;
  server: Server;
  /** The Koa app serving it (tests read its router's routes). */
  app: Koa;
  /** Base URL the gateway listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  logger: Logger;
  /** The MCP tool host (servers' status, pids, tools). */
  tools: ToolHost;
  /** Each model's deployments and their prober (tests run a probe round when they need one). */
  upstreams: Upstreams;
  /** The credit ledger, for chat/tool charging and tests (SQLite in DATA_DIR, or PostgreSQL in cluster mode). */
  ledger: Ledger;
  /** API keys (tests mint keys here without a SIWE round trip). */
  apiKeys: ApiKeys<KeyLimits>;
  /** The embedded API keys' file (probed by /health; tests make it fail); undefined in cluster mode. */
  store: KeyvStore | undefined;
  /** Aborted when shutdown's grace period is over and in-flight work is being cut off. */
  shuttingDown: AbortSignal;
  /** Run `closer` at shutdown, after HTTP traffic is drained (last registered runs first). */
  onClose(closer: Closer): void;
  /** Stop accepting, let in-flight requests finish (bounded, then abort them), run the closers. */
  close(): Promise<void>;
  /** SIGTERM: serve on for `server.drainDelayMs` with /health 503 `draining`, then `close()`. */
  drainAndClose(): Promise<void>;
}

export interface StartOptions {
  /** Where log lines go (tests capture them); default stdout. */
  logDestination?: { write(line: string): void };
}

/**
 * The composition root: build every part from config, start the HTTP server, and hand back one
 * handle to stop it all. `main.ts` and the tests both start the gateway through here.
 */
export async function startGateway(config: Config, env: Env, options: StartOptions = {}): Promise<RunningGateway> {
  const logger = createLogger(config.logLevel, options.logDestination);
  const startedAt = Date.now();
  const metrics = createMetrics();
  // Node's own Host check answers a bare 400: the app refuses a missing Host in its shape instead
  // (http/middleware/http-requirements.ts), as it does an Expect it cannot meet (below).
  const server = createServer({ requireHostHeader: false });
  // Shutdown first: it must see each request before the app does (see gracefulShutdown).
  const shutdown = gracefulShutdown(server, { graceMs: config.server.shutdownGraceMs, logger });
  // Tracing from the OTEL_* variables (off unless an endpoint is set: then nothing of the SDK is
  // loaded). Registered first, it closes last: the spans of everything else are exported before.
  const tracing = await startTracing(env, { onDropped: (count) => metrics.traceSpansDropped.inc(count) });
  shutdown.onClose(() => tracing.shutdown());
  if (tracing.enabled) logger.info(tracing.health().fields.tracing, 'tracing on');
  // Stores first, in the mode chosen here and nowhere else: in embedded mode the DATA_DIR lock
  // makes a second gateway on the same store refuse before it spawns anything; in cluster mode a
  // store that is down stops the start here. Registered first, the stores close last (after the tool host).
  const { siweRpcUrl } = config.accounts;
  const opening = { logger, siweChain: siweRpcUrl ? new ChainClient([siweRpcUrl], SIWE_READ_POLICY) : undefined };
  const stores = isClusterConfig(config) ? await openClusterStores(config, opening) : await openEmbeddedStores(config, opening);
  shutdown.onClose(() => stores.close());
  // Deposit watchers (a bad deposits section stops the start here) stop before the store they
  // write to closes: closers run last-registered first.
  let deposits;
  try {
    deposits = createDeposits({
      settings: config.deposits,
      env,
      store: stores.deposits,
      ledger: stores.ledger,
      metrics,
      logger,
      lease: stores.watchLease,
      // One reader per watched chain, over the chain list's URLs on the deposits' policy (deposits/chain-reader.ts).
      readerFor: (chain) => createChainReader({ chainId: chain.id, rpcUrls: chain.rpcUrls, timeoutMs: config.deposits.rpcTimeoutMs }),
    });
  } catch (err) {
    await shutdown.close();
    throw err;
  }
  if (deposits) {
    const running = deposits;
    shutdown.onClose(() => running.stop());
    running.start();
  }
  // Tool servers start before we listen, so /v1/tools is complete from the first request.
  const tools = createToolHost({
    servers: config.mcpServers,
    env,
    logger,
    metrics,
    ...(tracing.enabled ? { tracedAs: tracing.serviceName } : {}),
  });
  shutdown.onClose(() => tools.close());
  try {
    await tools.start();
  } catch (err) {
    await shutdown.close();
    throw err;
  }
  // Upstreams are probed once before we listen, so /health and fail-fast know their state at once.
  const upstreams = createUpstreams(config, env, logger, metrics);
  shutdown.onClose(() => upstreams.close());
  await upstreams.start();
  const draining = { health: () => ({ fields: {}, draining: shutdown.draining }) };
  const health = [stores.health, tools, upstreams.health, ...(deposits ? [deposits.health] : []), tracing, draining];
  const { shuttingDown } = shutdown;
  const x402 = openX402(config, stores, logger, metrics);
  if (x402) shutdown.onClose(() => x402.stop());
  const app = createApp({
    config,
    logger,
    metrics,
    startedAt,
    health,
    tools,
    shuttingDown,
    stores,
    upstreams,
    depositChains: deposits?.chains ?? [],
    x402,
    tracing,
  });
  server.on('request', app.callback());
  // Node holds back a request whose Expect is not 100-continue (answering a bare 417 when nobody
  // listens): it goes on as an ordinary request, which the app refuses with its 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  server.on('clientError', answerClientError);
  server.on('connect', refuseConnect);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.server.port, config.server.host, () => resolve());
    });
  } catch (err) {
    await shutdown.close(); // whatever was already started (stores, tool servers) stops too
    throw err;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url }, 'gateway listening');
  const publicHost = new URL(config.server.publicUrl).hostname;
  if (publicHost === '0.0.0.0' || publicHost === '[::]') {
    // Clients sign SIWE messages for this domain: no client reaches the gateway by that name.
    logger.warn(
      { publicUrl: config.server.publicUrl },
      `SIWE domain will be ${new URL(config.server.publicUrl).host}: set PUBLIC_URL to the address clients use`,
    );
  }

  return {
    config,
    server,
    app,
    url,
    logger,
    tools,
    upstreams,
    ledger: stores.ledger,
    apiKeys: stores.apiKeys,
    store: stores.keysFile,
    shuttingDown: shutdown.shuttingDown,
    onClose: shutdown.onClose,
    close: shutdown.close,
    drainAndClose: () => shutdown.drain(config.server.drainDelayMs),
  };
}

/** x402 top-ups when configured (and credits are on), reconciling pending settlements on a timer. */
function openX402(config: Config, stores: Stores, logger: Logger, metrics: Metrics): X402Payments | undefined {
  if (!config.x402 || config.freeMode) return undefined;
  const { ledger, paymentRecords: records } = stores;
  // One reader per asset RPC URL, on x402's policy (x402/settlement-reads.ts), for this gateway's life.
  const chains = settlementChains(config.x402.assets);
  const payments = new X402Payments({ config: config.x402, ledger, records, logger, outcomes: metrics.x402Payments, chains });
  payments.start();
  logger.info(
    { facilitator: urlWithoutPassword(config.x402.facilitatorUrl), networks: config.x402.assets.map((a) => a.network) },
    'x402 top-ups on',
  );
  return payments;
}
