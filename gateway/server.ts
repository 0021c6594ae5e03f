import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config, Env } from './config.js';
import { createApp } from './app.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { gracefulShutdown, type Closer } from './shutdown.js';

export interface RunningGateway {
  config: Config;
  server: Server;
  /** Base URL the gateway listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  logger: Logger;
  /** Aborted when shutdown's grace period is over and in-flight work is being cut off. */
  shuttingDown: AbortSignal;
  /** Run `closer` at shutdown, after HTTP traffic is drained (last registered runs first). */
  onClose(closer: Closer): void;
  /** Stop accepting, let in-flight requests finish (bounded, then abort them), run the closers. */
  close(): Promise<void>;
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
  void env;
  const logger = createLogger(config.logLevel, options.logDestination);
  const startedAt = Date.now();
  const metrics = createMetrics();
  const server = createServer();
  // Shutdown first: it must see each request before the app does (see gracefulShutdown).
  const shutdown = gracefulShutdown(server, { graceMs: config.server.shutdownGraceMs, logger });
  const app = createApp({ config, logger, metrics, startedAt, health: [], shuttingDown: shutdown.shuttingDown });
  server.on('request', app.callback());
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

  return {
    config,
    server,
    url,
    logger,
    shuttingDown: shutdown.shuttingDown,
    onClose: shutdown.onClose,
    close: shutdown.close,
  };
}
