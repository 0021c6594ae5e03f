import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from './logger.js';

/**
 * Serve `server` over stdin/stdout until stdin ends or SIGTERM/SIGINT arrives, then exit 0.
 * This is all a tool server's `main.ts` does after building its server.
 */
export async function runStdio(server: Server, logger: Logger): Promise<void> {
  const transport = new StdioServerTransport();
  let exiting = false;
  const exit = (reason: string) => {
    if (exiting) return;
    exiting = true;
    logger.info({ reason }, 'tool server stopping');
    server.close().finally(() => process.exit(0));
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
