/**
 * A model's deployments at run time: each with its client, its health, what this instance has
 * outstanding there, what the chat loop learned of its server, and its metric series (made once
 * here, never looked up per call). The chat loop asks `choose` where each upstream call goes and
 * reports how the call ended; a model with one deployment skips all of it (no hashing, no
 * cooldowns) and behaves as a single upstream always has.
 *
 * @example
 *   const deployment = fleet.choose(key, lastFailed)   // undefined: none is healthy
 *   fleet.begin(deployment)
 *   try { await deployment.client.streamChat(params, options) } finally { fleet.end(deployment) }
 */
import type { DeploymentConfig, RoutingConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { chooseDeployment, type Candidate } from './deployment-choice.js';
import { DeploymentHealth } from './deployment-health.js';
import { deploymentSeed } from './rendezvous.js';
import type { NextAttempt } from './retry-policy.js';
import type { UpstreamClient } from './upstream-client.js';
import type { UpstreamFailure } from './upstream-errors.js';

interface DeploymentSeries {
  requests: { inc(): void };
  failures: { inc(): void };
  outstanding: { inc(): void; dec(): void };
  cooldowns: { inc(): void };
  failovers: { inc(): void };
  moves: { inc(): void };
}

export class Deployment implements Candidate {
  readonly name: string;
  readonly seed: number;
  readonly weight: number;
  readonly priority: number;
  readonly maxOutputTokens: number;
  /** The model's name on this server (`upstreams[].model`): what a trace's `chat` span is named after. */
  readonly upstreamModel: string;
  /** Calls this instance has sent here that have not ended. */
  outstanding = 0;
  /**
   * This server was seen to write a `</think>` it never opened (its template opens it in the
   * prompt): its calls hold text back until the reasoning ends (see ThinkFilter).
   */
  reasoningInPrompt = false;
  readonly series: DeploymentSeries;

  constructor(
    modelId: string,
    config: DeploymentConfig,
    readonly client: UpstreamClient,
    readonly health: DeploymentHealth,
    metrics: Metrics,
  ) {
    this.name = config.name;
    this.seed = deploymentSeed(modelId, config.name);
    this.weight = config.weight;
    this.priority = config.priority;
    this.maxOutputTokens = config.maxOutputTokens;
    this.upstreamModel = config.model;
    const labels = { model: modelId, deployment: config.name };
    this.series = {
      requests: metrics.upstreamRequests.labels(labels),
      failures: metrics.upstreamFailures.labels(labels),
      outstanding: metrics.upstreamOutstanding.labels(labels),
      cooldowns: metrics.upstreamCooldowns.labels(labels),
      failovers: metrics.upstreamFailovers.labels(labels),
      moves: metrics.upstreamAffinityMoves.labels(labels),
    };
    // Every series is exposed from the start at 0, so a rate over it is defined before the first event.
    for (const series of Object.values(this.series)) series.inc(0);
  }

  get healthy(): boolean {
    return this.health.healthy(Date.now());
  }
}

export class Fleet {
  /** More than one deployment: calls are balanced, cooled down and failed over. */
  readonly several: boolean;
  /** The largest `maxOutputTokens` of the deployments: what a call's hold must cover, wherever it goes. */
  readonly maxOutputTokens: number;

  constructor(
    readonly modelId: string,
    readonly deployments: Deployment[],
    readonly routing: RoutingConfig,
    private readonly logger: Logger,
  ) {
    this.several = deployments.length > 1;
    this.maxOutputTokens = Math.max(...deployments.map((d) => d.maxOutputTokens));
  }

  /**
   * Where the next call of a conversation goes (`key` from conversationKey; undefined: no
   * conversation to keep together), never to `exclude`. Undefined when no other deployment is healthy.
   */
  choose(key: number | undefined, exclude?: Deployment): Deployment | undefined {
    if (!this.several) return exclude ? undefined : this.deployments[0];
    const keyed = key !== undefined;
    const choice = chooseDeployment(this.deployments, keyed ? key : (Math.random() * 4_294_967_296) >>> 0, {
      imbalance: this.routing.imbalance,
      keyed,
      exclude,
    });
    choice.movedFrom?.series.moves.inc();
    return choice.chosen;
  }

  /** Whether a call that fails on `deployment` could go elsewhere. */
  hasAlternative(deployment: Deployment): boolean {
    return this.several && this.deployments.some((d) => d !== deployment && d.healthy);
  }

  /** No deployment can take a call: the model answers 503 until one can. */
  isDown(): boolean {
    for (const d of this.deployments) if (d.healthy) return false;
    return true;
  }

  /** For a 503's Retry-After: seconds until the first cooldown ends, or until the next probe may bring one back. */
  retryAfterSeconds(): number {
    const now = Date.now();
    const cooling = this.deployments.filter((d) => d.health.state(now) === 'cooldown').map((d) => d.health.cooldownLeft(now));
    const ms = cooling.length ? Math.min(...cooling) : Math.min(5_000, this.routing.probeIntervalMs);
    return Math.max(1, Math.ceil(ms / 1000));
  }

  /**
   * A call reached `deployment` (it answered, any status) or, for good, could not: a model's only
   * deployment is down until it is reached again, so the next chats fail fast.
   */
  reached(deployment: Deployment, up: boolean): void {
    if (deployment.health.reachable(up, Date.now())) this.logState(deployment);
  }

  /** Log a deployment's new state (its probe, a call's reach, never a URL's credentials or query). */
  logState(deployment: Deployment): void {
    const state = deployment.health.state(Date.now());
    const entry = { model: this.modelId, deployment: deployment.name, upstream: deployment.client.redactedUrl, state };
    if (state === 'up') this.logger.info(entry, 'upstream is up');
    else this.logger.warn(entry, `upstream is ${state === 'down' ? 'down' : 'cooling down'}`);
  }

  /** A call is sent to `deployment`. */
  begin(deployment: Deployment): void {
    deployment.outstanding++;
    deployment.series.outstanding.inc();
    deployment.series.requests.inc();
  }

  /** The call sent to `deployment` ended, however it did. */
  end(deployment: Deployment): void {
    deployment.outstanding--;
    deployment.series.outstanding.dec();
  }

  /**
   * A call on `deployment` failed with `failure` and goes on as `next` says. Unless the upstream
   * refused the request itself (a 4xx), it counts against the deployment (a 429 cools it for its
   * Retry-After), and a fleet's log says what happened.
   */
  failed(deployment: Deployment, failure: UpstreamFailure, next: NextAttempt): void {
    const rateLimited = failure.kind === 'status' && failure.upstreamStatus === 429;
    // A 4xx other than 429 refused the request itself: no fault of the deployment's.
    if (!rateLimited && failure.kind === 'status' && (failure.upstreamStatus ?? 0) < 500) return;
    deployment.series.failures.inc();
    if (next === 'fail-over') deployment.series.failovers.inc();
    if (!this.several) {
      // Retries exhausted without a connection (a single reset is retried first).
      if (next === 'give-up' && failure.kind === 'connect') this.reached(deployment, false);
      return;
    }
    const now = Date.now();
    const cooled = rateLimited ? deployment.health.rateLimited(now, failure.retryAfter) : deployment.health.failed(now);
    this.logger.warn(
      { model: this.modelId, deployment: deployment.name, code: failure.code, kind: failure.kind, status: failure.upstreamStatus, next },
      'upstream call failed',
    );
    if (cooled) {
      deployment.series.cooldowns.inc();
      this.logger.warn(
        {
          model: this.modelId,
          deployment: deployment.name,
          ms: deployment.health.cooldownLeft(now),
          reason: rateLimited ? '429' : 'failures',
        },
        'deployment cooled down',
      );
    }
  }
}
