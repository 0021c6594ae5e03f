/**
 * Every model's deployments (fleet.ts), their clients on one shared keep-alive Agent, and their
 * health prober. Built by the composition root from config and the gateway's environment (API
 * keys are read from the variable each deployment names), started before the gateway listens,
 * closed at shutdown.
 *
 * @example
 *   const upstreams = createUpstreams(config, env, logger, metrics)
 *   await upstreams.start()
 *   // ... later
 *   await upstreams.close()
 */
import { Agent } from 'undici';
import type { Config, Env } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { DeploymentHealth } from './deployment-health.js';
import { Deployment, Fleet } from './fleet.js';
import { UpstreamClient } from './upstream-client.js';
import { upstreamSettingsOf } from './upstream-errors.js';
import { UpstreamHealth } from './upstream-health.js';

export interface Upstreams {
  /** By canonical model id. */
  fleets: Map<string, Fleet>;
  health: UpstreamHealth;
  /** Probe every deployment once, then at each model's `routing.probeIntervalMs`. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface UpstreamsOptions {
  probeTimeoutMs?: number;
}

export function createUpstreams(config: Config, env: Env, logger: Logger, metrics: Metrics, options: UpstreamsOptions = {}): Upstreams {
  const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 512 });
  const fleets = new Map<string, Fleet>();
  for (const model of config.models) {
    const passive = model.upstreams.length > 1;
    const deployments: Deployment[] = model.upstreams.map((deployment) => {
      const client: UpstreamClient = new UpstreamClient({
        modelId: model.id,
        upstreamSettings: upstreamSettingsOf(model),
        deployment,
        apiKey: deployment.apiKeyEnv ? env[deployment.apiKeyEnv] : undefined,
        dispatcher: agent,
        onResponded: () => fleet.reached(built, true),
      });
      const built = new Deployment(model.id, deployment, client, new DeploymentHealth(model.routing, { passive }), metrics);
      return built;
    });
    const fleet = new Fleet(model.id, deployments, model.routing, logger);
    fleets.set(model.id, fleet);
  }
  const started = new UpstreamHealth([...fleets.values()], { probeTimeoutMs: options.probeTimeoutMs });
  return {
    fleets,
    health: started,
    start: () => started.start(),
    async close() {
      started.stop();
      await agent.destroy(); // HTTP traffic has drained by now; nothing in flight is worth waiting for
    },
  };
}
