import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from './logger.js';
import { startServerTracing, stopServerTracing } from './tracing.js';

/**
 * Serve `server` over stdin/stdout until stdin ends or SIGTERM/SIGINT arrives, then exit 0.
 * This is all a tool server's `main.ts` does after building its server. Tracing starts first
 * when the OTEL_* variables configure it (kit/tracing.ts), and its queue is exported on the way out.
 */
export async function runStdio(server: Server, logger: Logger): Promise<void> {
  // The gateway names each child (OTEL_SERVICE_NAME=<gateway>-<server>); this is for one run by hand.
  await startServerTracing(process.env, 'switchyard-tool-server');
  const transport = new StdioServerTransport();
  let exiting = false;
  const exit = (reason: string) => {
    if (exiting) return;
    exiting = true;
    logger.info({ reason }, 'tool server stopping');
    server
      .close()
      .then(stopServerTracing)
      .finally(() => process.exit(0));
    // A stuck close must not keep the process alive.
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.stdin.on('end', () => exit('stdin closed'));
  process.stdin.on('close', () => exit('stdin closed'));
  process.once('SIGTERM', () => exit('SIGTERM'));
  process.once('SIGINT', () => exit('SIGINT'));
  await server.connect(transport);
  logger.info('tool server ready');
}
