import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RESTART_POLICY, nextRestart } from '../../../gateway/tools/restart-policy.js';

test('quick crashes back off exponentially to the cap, then crash-loop; a long run starts afresh', () => {
  const policy = { ...DEFAULT_RESTART_POLICY, initialDelayMs: 500, maxDelayMs: 3000, crashLoopAfter: 6, crashLoopDelayMs: 60_000 };
  const cases: Array<[number, number, { delayMs: number; quickCrashes: number; crashLoop: boolean }]> = [
    [0, 100, { delayMs: 500, quickCrashes: 1, crashLoop: false }],
    [1, 100, { delayMs: 1000, quickCrashes: 2, crashLoop: false }],
    [2, 0, { delayMs: 2000, quickCrashes: 3, crashLoop: false }],
    [3, 100, { delayMs: 3000, quickCrashes: 4, crashLoop: false }],
    [4, 100, { delayMs: 3000, quickCrashes: 5, crashLoop: false }],
    [5, 100, { delayMs: 60_000, quickCrashes: 6, crashLoop: true }],
    [9, 100, { delayMs: 60_000, quickCrashes: 10, crashLoop: true }],
    [9, 10_000, { delayMs: 500, quickCrashes: 1, crashLoop: false }],
    [3, 60_000, { delayMs: 500, quickCrashes: 1, crashLoop: false }],
  ];
  for (const [quickCrashes, uptimeMs, expected] of cases) {
    assert.deepEqual(nextRestart({ quickCrashes, uptimeMs }, policy), expected, `${quickCrashes} crashes, up ${uptimeMs} ms`);
  }
});

test('the default policy starts at 0.5 s and enters crash-loop after 5 quick crashes', () => {
  assert.deepEqual(nextRestart({ quickCrashes: 0, uptimeMs: 0 }, DEFAULT_RESTART_POLICY), {
    delayMs: 500,
    quickCrashes: 1,
    crashLoop: false,
  });
  assert.equal(nextRestart({ quickCrashes: 4, uptimeMs: 0 }, DEFAULT_RESTART_POLICY).crashLoop, true);
});
