import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outsideNames } from '../../../tool-servers/knowledge/outside-names.js';
import { queryTerms } from '../../../tool-servers/knowledge/text-terms.js';

const vocabulary = new Set(queryTerms('Uniswap swaps tokens; Wormhole bridges to Solana; Sky was MakerDAO, MKR; stake ETH'));
const outside = outsideNames(vocabulary);
const has = (word: string) => outside.namedIn(word);

test('outsideNames: coins from the list, by name or symbol, that the corpus never uses', () => {
  for (const word of ['marinade', 'synthetix', 'snx', 'cardano', 'polkadot', 'raydium', 'thorchain', 'binance']) {
    assert.ok(has(word), word);
  }
});

test('outsideNames: never a word the corpus uses, an everyday English word or a short one', () => {
  // Solana is on a page of this corpus; "near", "blast" and "atom" are coins but everyday words; "op" is too short.
  for (const word of ['uniswap', 'solana', 'mkr', 'near', 'blast', 'atom', 'token', 'op']) {
    assert.ok(!has(word), word);
  }
});

test('outsideNames: an everyday word that is also a coin names it only beside a word that says so', () => {
  for (const query of [
    'is blast l2 safe to use',
    'near protocol sharding',
    'what is the mantle token for',
    'how do i stake sol with marinade',
  ]) {
    assert.ok(outside.namedIn(query), query);
  }
  for (const query of ['near the top of the list', 'what a blast', 'how do i swap on uniswap', 'bridge eth to solana']) {
    assert.ok(!outside.namedIn(query), query);
  }
});
