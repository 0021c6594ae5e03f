import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foreignNames } from '../../../tool-servers/knowledge/foreign-names.js';
import { queryTerms } from '../../../tool-servers/knowledge/text-terms.js';

const vocabulary = new Set(queryTerms('Uniswap swap tokens bridge fees trading account open Coinbase Base stETH Lido'));

test('foreignNames: capitalised, camel-case and all-capital words the corpus never uses', () => {
  assert.deepEqual(foreignNames('How do I bridge my tokens to Avalanche?', vocabulary), ['avalanch']);
  assert.deepEqual(foreignNames('What are the trading fees on PancakeSwap?', vocabulary), ['pancakeswap']);
  assert.deepEqual(foreignNames('How do I stake ADA?', vocabulary), ['ada']);
  assert.deepEqual(foreignNames('can I swap on pancakeSwap', vocabulary), ['pancakeswap']);
});

test('foreignNames: names the corpus knows, lower-case words and the first word are not foreign', () => {
  assert.deepEqual(foreignNames('Can Coinbase censor my transactions on Base?', vocabulary), []);
  assert.deepEqual(foreignNames('how do i bridge to avalanche', vocabulary), []);
  assert.deepEqual(foreignNames('Explain how Uniswap swaps work', vocabulary), []);
  // When every word is capitalised (a title) or shouted, case says nothing.
  assert.deepEqual(foreignNames('HOW DO I BRIDGE TO AVALANCHE', vocabulary), []);
  assert.deepEqual(foreignNames('Bridge Tokens To Avalanche', vocabulary), []);
});
