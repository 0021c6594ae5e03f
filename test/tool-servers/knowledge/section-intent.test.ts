import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sectionIntent } from '../../../tool-servers/knowledge/section-intent.js';

test('sectionIntent: words and phrases that ask about a section', () => {
  const cases: Array<[string, string[]]> = [
    ['is the Aave token inflationary?', ['Token']],
    ['what is the total supply of LINK', ['Token']],
    ['Has Polygon PoS ever gone down?', ['Risks']],
    ['is it safe to restake', ['Risks']],
    ['who can freeze zkSync in an emergency', ['Governance']],
    ['who founded Compound', ['Overview']],
    ['how do I build a subgraph', ['How it works']],
    ['who made aave', ['Overview']],
    ['when did starknet launch', ['Overview']],
    ['is scroll centralized', ['Risks']],
    ['where are the scroll docs', ['Links']],
    // "built on" is the technology, "who built" the people.
    ['what is base built on', []],
    ['who built the graph', ['Overview']],
    // "Safe" the wallet and "supplying" assets say nothing about risk or the token.
    ['Can I put a spending limit on my Safe wallet?', []],
    ['Can I lose money by supplying assets on Aave?', ['Risks']],
  ];
  for (const [query, sections] of cases) assert.deepEqual([...sectionIntent(query)], sections, query);
});
