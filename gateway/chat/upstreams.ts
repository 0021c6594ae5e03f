/**
 * Every model's upstream client, on one shared keep-alive Agent, with their health prober.
 * Built by the composition root from config and the gateway's environment (API keys are read
 * from the variable each model names), started before the gateway listens, closed at shutdown.
 *
 * @example
 *   const upstreams = createUpstreams(config, env, logger)
 *   await upstreams.start()
 *   // ... later
 *   await upstreams.close()
 */
import { Agent } from 'undici';
import type { Config, Env } from '../config.js';
import type { Logger } from '../logger.js';
import { UpstreamClient } from './upstream-client.js';
import { UpstreamHealth } from './upstream-health.js';

export interface Upstreams {
  clients: Map<string, UpstreamClient>;
  health: UpstreamHealth;
  /** Probe every upstream once, then every `intervalMs`. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface UpstreamsOptions {
  probeIntervalMs?: number;
  probeTimeoutMs?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
}

export function createUpstreams(config: Config, env: Env, logger: Logger, options: UpstreamsOptions = {}): Upstreams {
  const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 512 });
  const clients = new Map<string, UpstreamClient>();
  let health: UpstreamHealth | undefined;
  for (const model of config.models) {
    const apiKeyEnv = model.upstream.apiKeyEnv;
    const client: UpstreamClient = new UpstreamClient({
      model,
      apiKey: apiKeyEnv ? env[apiKeyEnv] : undefined,
      dispatcher: agent,
      maxAttempts: options.maxAttempts,
      retryBaseMs: options.retryBaseMs,
      onReachable: (reachable) => health?.report(client, reachable),
    });
    clients.set(model.id, client);
  }
  health = new UpstreamHealth([...clients.values()], {
    logger,
    intervalMs: options.probeIntervalMs,
    probeTimeoutMs: options.probeTimeoutMs,
  });
  const started = health;
  return {
    clients,
    health: started,
    start: () => started.start(),
    async close() {
      started.stop();
      await agent.destroy(); // HTTP traffic has drained by now; nothing in flight is worth waiting for
    },
  };
}
