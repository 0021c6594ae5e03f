/**
 * One deployment's health: its `GET /models` probe says up or down; in a model with several
 * deployments, calls that fail also count against it (passive health): `failuresToCooldown`
 * failures within `failureWindowMs` cool it down for `cooldownMs`, and a 429 for its
 * `Retry-After` (at most `maxCooldownMs`). A probe that answers brings back a deployment cooled
 * for failures at once, never one a 429 asked to wait. A model's only deployment has nowhere
 * else to send its calls, so it is never cooled down (LiteLLM's router exempts single-deployment
 * groups the same way); it is down only while its probe fails or a call could not connect.
 * Times are passed in (`now`, ms since the epoch), so the rules are tested with tables.
 *
 * @example
 *   const health = new DeploymentHealth(config.routing, { passive: true })
 *   health.failed(Date.now())     // true on the failure that starts a cooldown
 *   health.state(Date.now())      // 'up' | 'down' | 'cooldown'
 */
import type { RoutingConfig } from '../config.js';

export type DeploymentState = 'up' | 'down' | 'cooldown';

type CooldownRules = Pick<RoutingConfig, 'failuresToCooldown' | 'failureWindowMs' | 'cooldownMs' | 'maxCooldownMs'>;

export class DeploymentHealth {
  private probe: 'up' | 'down' = 'up';
  private coolUntil = 0;
  private coolReason?: 'failures' | 'rate-limit';
  /** When the latest failures happened, oldest first; at most `failuresToCooldown`. */
  private readonly failures: number[] = [];

  constructor(
    private readonly rules: CooldownRules,
    private readonly options: { passive: boolean },
  ) {}

  state(now: number): DeploymentState {
    if (this.probe === 'down') return 'down';
    return this.coolUntil > now ? 'cooldown' : 'up';
  }

  healthy(now: number): boolean {
    return this.probe === 'up' && this.coolUntil <= now;
  }

  /** Milliseconds until a cooldown ends (0 when none runs). */
  cooldownLeft(now: number): number {
    return Math.max(0, this.coolUntil - now);
  }

  /** A call failed (connection, 5xx, timeout, broken stream); true when this failure starts a cooldown. */
  failed(now: number): boolean {
    if (!this.options.passive || this.coolUntil > now) return false;
    this.failures.push(now);
    if (this.failures.length > this.rules.failuresToCooldown) this.failures.shift();
    if (this.failures.length < this.rules.failuresToCooldown || now - this.failures[0] > this.rules.failureWindowMs) return false;
    this.failures.length = 0;
    return this.coolDown(now, this.rules.cooldownMs, 'failures');
  }

  /** The upstream answered 429 with this `Retry-After` (or none); true when it starts or extends a cooldown. */
  rateLimited(now: number, retryAfter: string | undefined): boolean {
    if (!this.options.passive) return false;
    const wait = retryAfterMs(retryAfter, now) ?? this.rules.cooldownMs;
    return this.coolDown(now, Math.min(wait, this.rules.maxCooldownMs), 'rate-limit');
  }

  /** The probe's answer; true when the state changed. Up brings back a deployment cooled for failures. */
  probed(up: boolean, now: number): boolean {
    const before = this.state(now);
    this.probe = up ? 'up' : 'down';
    if (up && this.coolReason === 'failures') this.coolUntil = 0;
    return this.state(now) !== before;
  }

  /**
   * A model's only deployment: a call that could not connect marks it down until a call or probe
   * reaches it again, so the next chats fail fast. True when the state changed.
   */
  reachable(up: boolean, now: number): boolean {
    if (this.options.passive) return false;
    return this.probed(up, now);
  }

  private coolDown(now: number, ms: number, reason: 'failures' | 'rate-limit'): boolean {
    if (now + ms <= this.coolUntil) return false;
    this.coolUntil = now + ms;
    this.coolReason = reason;
    return true;
  }
}

/**
 * `Retry-After` in milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3);
 * undefined when absent or unreadable.
 *
 * @example
 *   retryAfterMs('120', now) // 120000
 *   retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', now) // until then (0 if past)
 */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form (IMF-fixdate, RFC 850, asctime) starts with the day's name.
  const at = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
