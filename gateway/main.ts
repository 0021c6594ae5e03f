/**
 * Entry point: read config once, start the gateway, stop cleanly on SIGTERM/SIGINT.
 * A bad config exits 1 with a message naming the field.
 */
import { ConfigError, loadConfig } from './config.js';

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
  // Loaded only once the config is good, so a bad config fails fast without loading every part.
  const { startGateway } = await import('./server.js');
  const gateway = await startGateway(config, process.env);
  // pino writes asynchronously: let the last lines reach stdout (in order) before exiting.
  const exit = (code: number) => gateway.logger.flush(() => process.exit(code));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal means "now": the operator does not want to wait for the grace period.
      gateway.logger.warn({ signal }, 'second signal: exiting without waiting');
      exit(1);
      return;
    }
    stopping = true;
    gateway.logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => {
        gateway.logger.info('shut down cleanly');
        exit(0);
      },
      (err) => {
        gateway.logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`switchyard: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
