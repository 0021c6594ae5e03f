/**
 * Which deployments are up. Each deployment's `GET {base}/models` is probed at start and every
 * `routing.probeIntervalMs` of its model; chat calls report too (fleet.ts), so a
 * deployment that just went away stops taking calls without waiting for a probe. Reports into
 * `/health` as `models: [{id, upstream, deployments: [{name, state, outstanding}]}]` (names only,
 * never a URL or key), `degraded` while some model has no deployment that can take a call.
 *
 * @example
 *   const health = new UpstreamHealth([...fleets.values()])
 *   await health.start()
 */
import type { HealthContributor } from '../health.js';
import type { Fleet } from './fleet.js';

export interface UpstreamHealthOptions {
  probeTimeoutMs?: number;
}

export class UpstreamHealth implements HealthContributor {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly probeTimeoutMs: number;

  constructor(
    private readonly fleets: Fleet[],
    options: UpstreamHealthOptions = {},
  ) {
    this.probeTimeoutMs = options.probeTimeoutMs ?? 2_000;
  }

  /** Probe every deployment once (bounded by the probe timeout), then keep probing each model at its interval. */
  async start(): Promise<void> {
    await Promise.all(this.fleets.map((fleet) => this.probe(fleet)));
    for (const fleet of this.fleets) {
      const timer = setInterval(() => void this.probe(fleet), fleet.routing.probeIntervalMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  stop(): void {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
  }

  async probeAll(): Promise<void> {
    await Promise.all(this.fleets.map((fleet) => this.probe(fleet)));
  }

  health(): { fields: Record<string, unknown>; degraded?: boolean } {
    const now = Date.now();
    let degraded = false;
    const models = this.fleets.map((fleet) => {
      const deployments = fleet.deployments.map((d) => ({ name: d.name, state: d.health.state(now), outstanding: d.outstanding }));
      const up = deployments.some((d) => d.state === 'up');
      if (!up) degraded = true;
      return { id: fleet.modelId, upstream: up ? 'up' : 'down', deployments };
    });
    return { fields: { models }, degraded };
  }

  private async probe(fleet: Fleet): Promise<void> {
    await Promise.all(
      fleet.deployments.map(async (d) => {
        const up = await d.client.probe(this.probeTimeoutMs);
        if (d.health.probed(up, Date.now())) fleet.logState(d);
      }),
    );
  }
}
