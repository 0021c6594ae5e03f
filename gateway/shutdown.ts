import type { Server, ServerResponse } from 'node:http';
import type { Logger } from './logger.js';

/** Something to stop at shutdown once HTTP traffic is over: a store, the tool host. */
export type Closer = () => void | Promise<void>;

export interface GracefulShutdown {
  /**
   * Aborted when the grace period is over and in-flight requests are being cut off. Long work
   * (upstream calls, tool calls) ties its own signal to it so it stops instead of running on.
   */
  readonly shuttingDown: AbortSignal;
  /** Register a closer; closers run after HTTP is drained, last registered first. */
  onClose(closer: Closer): void;
  /** True from `drain()` on: /health answers 503 `draining` so load balancers stop sending. */
  readonly draining: boolean;
  /**
   * A rolling restart's stop: keep listening and serving for `delayMs` while /health says
   * `draining` (a balancer's probe sees a 503, not a refused connection), then `close()`. Every
   * response from now on ends its connection, so clients reconnect to another instance.
   */
  drain(delayMs: number): Promise<void>;
  /**
   * Stop accepting connections, let in-flight requests finish for up to `graceMs`, then abort
   * them (signal + destroyed sockets), then run the closers. Idempotent: later calls share the
   * first call's promise. Rejects with an AggregateError if any closer failed (after running all).
   */
  close(): Promise<void>;
}

/**
 * Graceful shutdown for one HTTP server. Call it before the app's request listener is attached,
 * so responses that start while draining can be marked `Connection: close` first.
 *
 * @example
 *   const server = createServer();
 *   const shutdown = gracefulShutdown(server, { graceMs: 10_000, logger });
 *   server.on('request', app.callback());
 *   shutdown.onClose(() => store.close());
 *   process.once('SIGTERM', () => shutdown.close().then(() => process.exit(0)));
 */
export function gracefulShutdown(server: Server, options: { graceMs: number; logger: Logger }): GracefulShutdown {
  const { graceMs, logger } = options;
  const inFlight = new Set<ServerResponse>();
  const closers: Closer[] = [];
  const abort = new AbortController();
  let draining = false;
  let announced = false;
  let closing: Promise<void> | undefined;
  let drained: Promise<void> | undefined;

  server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    if (draining || announced) res.setHeader('connection', 'close');
    res.once('close', () => {
      inFlight.delete(res);
      // A keep-alive socket that just finished its last response is idle now: close it too.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });

  async function drainHttp(): Promise<void> {
    draining = true;
    // Responses not yet started end their connection instead of keeping it alive.
    for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();

    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace-over'>((resolve) => {
      timer = setTimeout(() => resolve('grace-over'), graceMs);
    });
    const outcome = await Promise.race([closed.then(() => 'drained' as const), graceOver]);
    clearTimeout(timer);
    if (outcome === 'grace-over') {
      logger.warn({ inFlight: inFlight.size, graceMs }, 'shutdown grace period over: aborting in-flight requests');
      abort.abort(new Error('The gateway is shutting down.'));
      server.closeAllConnections();
      await closed;
    }
  }

  async function runClosers(): Promise<void> {
    const failures: unknown[] = [];
    for (const closer of [...closers].reverse()) {
      try {
        await closer();
      } catch (err) {
        failures.push(err);
        logger.error({ err }, 'a part failed to close');
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} part(s) failed to close`);
  }

  const close = (): Promise<void> => {
    closing ??= drainHttp().then(runClosers);
    return closing;
  };

  return {
    shuttingDown: abort.signal,
    get draining() {
      return announced || draining;
    },
    onClose(closer) {
      closers.push(closer);
    },
    drain(delayMs) {
      announced = true;
      drained ??= new Promise<void>((resolve) => setTimeout(resolve, delayMs)).then(close);
      return drained;
    },
    close,
  };
}
