/**
 * Entry point: read config once, start the gateway, stop cleanly on SIGTERM/SIGINT.
 * A bad config exits 1 with a message naming the field.
 *
 * Signal handlers are installed before start-up, which spawns the tool servers and takes
 * seconds: a signal in that window lets start-up finish, then closes everything (children, store,
 * lock) and exits 0, instead of dying with the children and the lock left behind.
 */
import { ConfigError, loadConfig } from './config.js';
import type { RunningGateway } from './server.js';

/**
 * timeout(1), shells and process managers often send one stop request both to the process and to
 * its group: a second signal this soon after the first is the same request, not "stop now".
 */
const REPEAT_SIGNAL_MS = 1_000;

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

  let gateway: RunningGateway | undefined;
  let firstSignal: { name: string; at: number } | undefined;
  // pino writes asynchronously: let the last lines reach stdout (in order) before exiting.
  const exit = (code: number) => (gateway ? gateway.logger.flush(() => process.exit(code)) : process.exit(code));
  const stop = (running: RunningGateway, signal: string) => {
    running.logger.info({ signal, drainDelayMs: running.config.server.drainDelayMs }, 'shutting down');
    running.drainAndClose().then(
      () => {
        running.logger.info('shut down cleanly');
        exit(0);
      },
      (err) => {
        running.logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  const onSignal = (signal: string) => {
    if (firstSignal) {
      if (Date.now() - firstSignal.at < REPEAT_SIGNAL_MS) return;
      // A later signal means "now": the operator does not want to wait for the grace period.
      if (gateway) gateway.logger.warn({ signal }, 'second signal: exiting without waiting');
      else process.stderr.write(`switchyard: ${signal} again during start-up: exiting without waiting\n`);
      exit(1);
      return;
    }
    firstSignal = { name: signal, at: Date.now() };
    // During start-up there is nothing to stop yet: start-up checks firstSignal when it is done.
    if (gateway) stop(gateway, signal);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  // Loaded only once the config is good, so a bad config fails fast without loading every part.
  const { startGateway } = await import('./server.js');
  gateway = await startGateway(config, process.env);
  if (firstSignal) stop(gateway, firstSignal.name);
}

main().catch((err) => {
  process.stderr.write(`switchyard: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
