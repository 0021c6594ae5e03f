/**
 * Entry point: read config once, start the gateway, stop cleanly on SIGTERM/SIGINT.
 * A bad config exits 1 with a message naming the field.
 */
import { ConfigError, loadConfig } from './config.js';
import { startGateway } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`switchyard: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const gateway = await startGateway(config, process.env);
  const stop = (signal: string) => {
    gateway.logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      (err) => {
        gateway.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`switchyard: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
