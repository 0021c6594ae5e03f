import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseDeployment, type Candidate } from '../../../gateway/chat/deployment-choice.js';
import { deploymentSeed, rendezvousScore } from '../../../gateway/chat/rendezvous.js';

interface Named extends Candidate {
  name: string;
}

function deployment(name: string, more: Partial<Candidate> = {}): Named {
  return { name, seed: deploymentSeed('svc-32b-conductor', name), weight: 1, priority: 0, outstanding: 0, healthy: true, ...more };
}

/** Keys spread as SHA-256 output is (a fixed pseudo-random sequence, so the test is the same every run). */
function keys(count: number): number[] {
  let x = 0x9e3779b9;
  return Array.from({ length: count }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  });
}

const counts = (names: string[]) => names.reduce<Record<string, number>>((all, n) => ({ ...all, [n]: (all[n] ?? 0) + 1 }), {});
const choose = (ds: Named[], key: number, more: { imbalance?: number; keyed?: boolean; exclude?: Named } = {}) =>
  chooseDeployment(ds, key, { imbalance: more.imbalance ?? 4, keyed: more.keyed ?? true, exclude: more.exclude });

test('conversations spread across replicas in proportion to their weights', () => {
  const ds = [deployment('a'), deployment('b', { weight: 2 }), deployment('c')];
  const spread = counts(keys(40_000).map((k) => choose(ds, k).chosen!.name));
  assert.ok(Math.abs(spread.a / 40_000 - 0.25) < 0.01, JSON.stringify(spread));
  assert.ok(Math.abs(spread.b / 40_000 - 0.5) < 0.01, JSON.stringify(spread));
  assert.ok(Math.abs(spread.c / 40_000 - 0.25) < 0.01, JSON.stringify(spread));
});

test('the same key always picks the same deployment, whatever the order the deployments are listed in', () => {
  const ds = [deployment('a'), deployment('b'), deployment('c')];
  for (const k of keys(500)) assert.equal(choose(ds, k).chosen!.name, choose([...ds].reverse(), k).chosen!.name);
});

test('a deployment that leaves moves only its own conversations; they spread over the others', () => {
  const ds = [deployment('a'), deployment('b'), deployment('c')];
  const without = ds.filter((d) => d.name !== 'b');
  const moved: string[] = [];
  for (const k of keys(9_000)) {
    const before = choose(ds, k).chosen!.name;
    const after = choose(without, k).chosen!.name;
    if (before !== 'b') assert.equal(after, before);
    else moved.push(after);
  }
  const spread = counts(moved);
  assert.ok(Math.abs(spread.a - spread.c) < moved.length * 0.1, JSON.stringify(spread));
});

test('priority tiers: a higher number only while every lower one is unhealthy', () => {
  const ds = [deployment('gpu-a'), deployment('gpu-b'), deployment('hosted', { priority: 1 })];
  for (const k of keys(200)) assert.notEqual(choose(ds, k).chosen!.name, 'hosted');
  ds[0].healthy = false;
  for (const k of keys(200)) assert.equal(choose(ds, k).chosen!.name, 'gpu-b');
  ds[1].healthy = false;
  for (const k of keys(200)) assert.equal(choose(ds, k).chosen!.name, 'hosted');
  ds[2].healthy = false;
  assert.equal(choose(ds, 1).chosen, undefined);
});

test('exclude: the deployment a call just failed on is never chosen again, the next by hash is', () => {
  const ds = [deployment('a'), deployment('b'), deployment('c')];
  for (const k of keys(300)) {
    const first = choose(ds, k).chosen!;
    const second = choose(ds, k, { exclude: first }).chosen!;
    assert.notEqual(second, first);
    const ranked = ds
      .filter((d) => d !== first)
      .sort((x, y) => rendezvousScore(k, y.seed, y.weight) - rendezvousScore(k, x.seed, x.weight));
    assert.equal(second, ranked[0]);
  }
  const lone = [deployment('a'), deployment('b', { healthy: false })];
  assert.equal(choose(lone, 7, { exclude: lone[0] }).chosen, undefined);
});

test('imbalance: past `imbalance` more outstanding than the least loaded, the least loaded (÷ weight) takes the call', () => {
  const ds = [deployment('a'), deployment('b'), deployment('c')];
  const key = keys(1)[0];
  const home = choose(ds, key).chosen!;
  const others = ds.filter((d) => d !== home);
  home.outstanding = 6;
  others[0].outstanding = 2;
  others[1].outstanding = 3;
  assert.deepEqual(choose(ds, key), { chosen: home }, '6 - 2 = 4 is not more than 4');
  home.outstanding = 7;
  assert.deepEqual(choose(ds, key), { chosen: others[0], movedFrom: home });
  // By outstanding ÷ weight: 3 ÷ 2 beats 2 ÷ 1.
  others[1].weight = 2;
  assert.deepEqual(choose(ds, key), { chosen: others[1], movedFrom: home });
  assert.deepEqual(choose(ds, key, { imbalance: 10 }), { chosen: home });
});

test('no conversation: the least loaded by outstanding ÷ weight, equal loads broken by the hash', () => {
  const ds = [deployment('a', { outstanding: 2 }), deployment('b', { outstanding: 1 }), deployment('c', { outstanding: 1, weight: 2 })];
  assert.equal(choose(ds, 5, { keyed: false }).chosen!.name, 'c');
  assert.equal(choose(ds, 5, { keyed: false }).movedFrom, undefined);
  ds[2].outstanding = 2; // 2 ÷ 2 = 1 ÷ 1: the tie goes to the higher score
  const spread = counts(keys(3_000).map((k) => choose(ds, k, { keyed: false }).chosen!.name));
  assert.deepEqual(Object.keys(spread).sort(), ['b', 'c']);
  assert.ok(spread.b > 500 && spread.c > 500, JSON.stringify(spread));
});
