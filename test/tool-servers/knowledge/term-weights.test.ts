import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTermWeights, largestIdf } from '../../../tool-servers/knowledge/term-weights.js';

test('createTermWeights: rarer terms weigh more, a term in one passage or none weighs 1', () => {
  const weights = createTermWeights([
    new Set(['flash', 'loan', 'token']),
    new Set(['loan', 'token']),
    new Set(['token']),
    new Set(['vote']),
  ]);
  assert.equal(weights.weight('flash'), 1);
  assert.equal(weights.weight('never-seen'), 1);
  assert.ok(weights.weight('token') < weights.weight('loan') && weights.weight('loan') < weights.weight('flash'));
  assert.deepEqual([...weights.vocabulary].sort(), ['flash', 'loan', 'token', 'vote']);
  assert.equal(largestIdf(4), Math.log(1 + 3.5 / 1.5));
});
