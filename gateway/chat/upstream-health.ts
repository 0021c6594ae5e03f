/**
 * Which upstreams are up. Each model's `GET {base}/models` is probed at start and every 30 s;
 * chat calls report reachability too, so a model that just went away fails fast without waiting
 * for the next probe. Reports into `/health` as `models: [{id, upstream}]`, `degraded` when the
 * primary (first) model is down.
 *
 * @example
 *   const health = new UpstreamHealth(clients, { intervalMs: 30_000, logger })
 *   await health.start()
 *   health.isDown('svc-32b-conductor') // false
 */
import type { Logger } from '../logger.js';
import type { HealthContributor } from '../health.js';
import type { UpstreamClient } from './upstream-client.js';

export type UpstreamState = 'up' | 'down';

export interface UpstreamHealthOptions {
  intervalMs?: number;
  probeTimeoutMs?: number;
  logger: Logger;
}

export class UpstreamHealth implements HealthContributor {
  private readonly states = new Map<string, UpstreamState>();
  private timer?: NodeJS.Timeout;
  private readonly intervalMs: number;
  private readonly probeTimeoutMs: number;

  constructor(
    private readonly clients: UpstreamClient[],
    private readonly options: UpstreamHealthOptions,
  ) {
    this.intervalMs = options.intervalMs ?? 30_000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 2_000;
    // Unknown until the first probe: assume up rather than refuse traffic.
    for (const client of clients) this.states.set(client.modelId, 'up');
  }

  /** Probe every upstream once (bounded by the probe timeout), then keep probing in the background. */
  async start(): Promise<void> {
    await this.probeAll();
    this.timer = setInterval(() => void this.probeAll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async probeAll(): Promise<void> {
    await Promise.all(
      this.clients.map(async (client) => {
        this.set(client, (await client.probe(this.probeTimeoutMs)) ? 'up' : 'down');
      }),
    );
  }

  /** A chat call reached (or failed to reach) the upstream. */
  report(client: UpstreamClient, reachable: boolean): void {
    this.set(client, reachable ? 'up' : 'down');
  }

  isDown(modelId: string): boolean {
    return this.states.get(modelId) === 'down';
  }

  health(): { fields: Record<string, unknown>; degraded?: boolean } {
    const models = this.clients.map((c) => ({ id: c.modelId, upstream: this.states.get(c.modelId) ?? 'up' }));
    return { fields: { models }, degraded: models[0]?.upstream === 'down' };
  }

  private set(client: UpstreamClient, state: UpstreamState): void {
    const before = this.states.get(client.modelId);
    if (before === state) return;
    this.states.set(client.modelId, state);
    const entry = { model: client.modelId, upstream: client.redactedUrl, state };
    if (state === 'down') this.options.logger.warn(entry, 'upstream is down');
    else this.options.logger.info(entry, 'upstream is up');
  }
}
