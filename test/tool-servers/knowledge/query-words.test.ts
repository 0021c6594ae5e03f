import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queryWords } from '../../../tool-servers/knowledge/query-words.js';

test('queryWords: casual words carry their synonyms, other words only themselves', () => {
  const words = queryWords('whos behind base');
  // "whos" is a contraction of a question word: dropped like "who".
  assert.deepEqual(
    words.map((word) => word.term),
    ['behind', 'bas'],
  );
  assert.ok(words[0].alternatives.includes('incubat') && words[0].alternatives.includes('found'));
  assert.equal(words[0].alternatives[0], 'behind');
  assert.deepEqual(words[1].alternatives, ['bas']);
  // "who made it", "who wrote it": the casual verbs reach "founded by" too.
  assert.ok(['made', 'built', 'wrote'].every((term) => queryWords(`who ${term} it`)[0].alternatives.includes('found')));
  assert.deepEqual(
    queryWords('chainlink whitepaper').map((word) => word.term),
    ['chainlink', 'whit', 'pap'],
  );
});

test('queryWords: "go up" and "gone down" become one word each before splitting', () => {
  const up = queryWords('How often does my stETH balance go up?');
  // "how often" is scaffolding of the question, like "how".
  assert.deepEqual(
    up.map((word) => word.term),
    ['steth', 'balanc', 'increas'],
  );
  assert.ok(['grow', 'accru', 'rebas'].every((term) => up[2].alternatives.includes(term)));
  const down = queryWords('Has Polygon PoS ever gone down?');
  assert.deepEqual(
    down.map((word) => word.term),
    ['polygon', 'pos', 'outag'],
  );
});

test('queryWords: a word repeated or written twice in a group counts once', () => {
  assert.deepEqual(
    queryWords('fees fee Fees').map((word) => word.term),
    ['fee'],
  );
  assert.deepEqual(queryWords(''), []);
});

test('queryWords: "is … safe" asks about risk, unless SAFE is written as the token or followed by what it is', () => {
  assert.deepEqual(
    queryWords('is starknet safe').map((word) => word.term),
    ['starknet', 'risk'],
  );
  assert.deepEqual(
    queryWords('what is the SAFE token for').map((word) => word.term),
    ['saf', 'token'],
  );
  assert.deepEqual(
    queryWords('is the safe wallet audited').map((word) => word.term),
    ['saf', 'wallet', 'audit'],
  );
});
