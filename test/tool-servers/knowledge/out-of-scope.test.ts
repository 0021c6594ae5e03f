import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outOfScope } from '../../../tool-servers/knowledge/out-of-scope.js';

test('outOfScope: live figures, contact details and company records', () => {
  assert.equal(outOfScope('what is the price of eth right now'), 'live market data');
  assert.equal(outOfScope('current apy on aave usdc'), 'live market data');
  assert.equal(outOfScope('how much gas does a swap cost right now'), 'live market data');
  assert.equal(outOfScope('uni price prediction'), 'live market data');
  assert.equal(outOfScope('lido customer support phone number'), 'contact details');
  assert.equal(outOfScope('how do i contact them by email address'), 'contact details');
  assert.equal(outOfScope('uniswap office address'), 'company records');
  assert.equal(outOfScope('where is lido headquartered'), 'company records');
  assert.equal(outOfScope('aave ceo salary'), 'company records');
});

test('outOfScope: a figure without a time, or a time without a figure, asks about the project', () => {
  for (const query of [
    'how is the stETH price kept close to ETH',
    'what is makerdao called now',
    'does aave support usdc',
    'where does the yield on sUSDe come from',
    'how does chainlink get the eth price',
    'what fees does uniswap charge',
    'what address does my ENS name point to',
  ]) {
    assert.equal(outOfScope(query), undefined, query);
  }
});
