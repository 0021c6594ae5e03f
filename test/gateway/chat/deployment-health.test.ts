import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentHealth, retryAfterMs } from '../../../gateway/chat/deployment-health.js';

const RULES = { failuresToCooldown: 3, failureWindowMs: 60_000, cooldownMs: 30_000, maxCooldownMs: 300_000 };
const T = 1_800_000_000_000;

test('failuresToCooldown failures within the window cool a deployment for cooldownMs; spread out, they do not', () => {
  const health = new DeploymentHealth(RULES, { passive: true });
  assert.equal(health.failed(T), false);
  assert.equal(health.failed(T + 70_000), false);
  assert.equal(health.failed(T + 80_000), false, 'the first failure fell out of the window');
  assert.equal(health.state(T + 80_000), 'up');
  assert.equal(health.failed(T + 90_000), true, 'three within 60 s');
  assert.equal(health.state(T + 90_000), 'cooldown');
  assert.equal(health.healthy(T + 90_000), false);
  assert.equal(health.cooldownLeft(T + 100_000), 20_000);
  assert.equal(health.failed(T + 100_000), false, 'failures of calls still running while cooling do not count');
  assert.equal(health.state(T + 120_000), 'up', 'back once cooldownMs passed');
  assert.equal(health.failed(T + 121_000), false, 'the count starts afresh');
});

test('a 429 cools for its Retry-After (seconds or an HTTP date), cooldownMs without one, never past maxCooldownMs', () => {
  const table: Array<[string | undefined, number]> = [
    ['7', 7_000],
    [new Date(T + 12_000).toUTCString(), 12_000],
    [undefined, 30_000],
    ['soon', 30_000],
    ['86400', 300_000],
  ];
  for (const [retryAfter, ms] of table) {
    const health = new DeploymentHealth(RULES, { passive: true });
    assert.equal(health.rateLimited(T, retryAfter), true, String(retryAfter));
    assert.equal(health.cooldownLeft(T), ms, String(retryAfter));
    assert.equal(health.state(T + ms - 1), 'cooldown');
    assert.equal(health.state(T + ms), 'up');
  }
});

test('a probe that answers brings back a deployment cooled for failures, not one a 429 asked to wait', () => {
  const failing = new DeploymentHealth(RULES, { passive: true });
  for (const at of [0, 1, 2]) failing.failed(T + at);
  assert.equal(failing.state(T + 10), 'cooldown');
  assert.equal(failing.probed(true, T + 10), true);
  assert.equal(failing.state(T + 10), 'up');

  const limited = new DeploymentHealth(RULES, { passive: true });
  limited.rateLimited(T, '60');
  assert.equal(limited.probed(true, T + 10), false);
  assert.equal(limited.state(T + 10), 'cooldown');

  const probedDown = new DeploymentHealth(RULES, { passive: true });
  assert.equal(probedDown.probed(false, T), true);
  assert.equal(probedDown.state(T), 'down');
  assert.equal(probedDown.reachable(true, T), false, "in a fleet a call's reach does not overrule the probe");
  assert.equal(probedDown.probed(true, T + 1), true);
  assert.equal(probedDown.state(T + 1), 'up');
});

test("a model's only deployment is never cooled: down while unreachable, up once reached", () => {
  const only = new DeploymentHealth(RULES, { passive: false });
  for (const at of [0, 1, 2, 3]) assert.equal(only.failed(T + at), false);
  assert.equal(only.rateLimited(T, '60'), false);
  assert.equal(only.state(T + 5), 'up');
  assert.equal(only.reachable(false, T), true);
  assert.equal(only.state(T), 'down');
  assert.equal(only.reachable(true, T), true);
  assert.equal(only.state(T), 'up');
});

test('retryAfterMs reads delta-seconds and HTTP dates; a date in the past is 0', () => {
  assert.equal(retryAfterMs(' 3 ', T), 3_000);
  assert.equal(retryAfterMs('Thu, 01 Jan 1970 00:00:00 GMT', T), 0);
  assert.equal(retryAfterMs(undefined, T), undefined);
  assert.equal(retryAfterMs('-1', T), undefined);
});
