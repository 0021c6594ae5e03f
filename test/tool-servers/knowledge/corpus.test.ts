import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadCorpus, parseProjectFile } from '../../../tool-servers/knowledge/corpus.js';
import { bestSnippet } from '../../../tool-servers/knowledge/snippet.js';
import { normalizeTerm, queryTerms } from '../../../tool-servers/knowledge/text-terms.js';

const DIR = join(process.cwd(), 'config/knowledge');

test('the shipped corpus: at least 30 projects, 1–3 KB each, the six sections, front matter complete with its sources', () => {
  const files = readdirSync(DIR).filter((file) => file.endsWith('.md'));
  const projects = loadCorpus(DIR);
  assert.equal(projects.length, files.length, 'every shipped file parses');
  assert.ok(projects.length >= 30);
  for (const project of projects) {
    const size = statSync(join(DIR, project.file)).size;
    assert.ok(size >= 1024 && size <= 3072, `${project.file} is ${size} bytes`);
    assert.deepEqual(
      project.sections.map((s) => s.heading),
      ['Overview', 'How it works', 'Token', 'Governance', 'Risks', 'Links'],
      project.file,
    );
    assert.match(project.as_of, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(project.links.website.startsWith('https://'), project.file);
    assert.ok(project.source.length > 0, `${project.file} names no source`);
  }
});

test('parseProjectFile: front matter fields, sections by ## only, the title line and ### kept as text', () => {
  const project = parseProjectFile(
    '---\nname: Demo\naliases: [Demo Protocol]\ntoken: DMO\ncategory: dex\nlinks:\n  website: https://demo.example\nas_of: 2025-01-02\n---\n' +
      '# Demo\nintro is ignored\n## Overview\nDemo swaps.\n### Detail\nMore.\n## Empty\n\n## Risks ##\nBugs.\n',
    'demo.md',
  );
  assert.deepEqual(
    { id: project.id, name: project.name, aliases: project.aliases, token: project.token, as_of: project.as_of },
    { id: 'demo', name: 'Demo', aliases: ['Demo Protocol'], token: 'DMO', as_of: '2025-01-02' },
  );
  assert.deepEqual(project.sections, [
    { heading: 'Overview', text: 'Demo swaps.\n### Detail\nMore.' },
    { heading: 'Risks', text: 'Bugs.' },
  ]);
  const minimal = parseProjectFile(
    '---\nname: M\ncategory: x\nlinks: {website: https://m.example}\nas_of: 2025-01-01\n---\n## A\nB\n',
    'm.md',
  );
  assert.deepEqual([minimal.aliases, minimal.token, minimal.source], [[], null, []]);
  const frontMatter = (source: string) => `name: M\ncategory: x\nlinks: {website: https://m.example}\nsource: ${source}\nas_of: 2025-01-01`;
  const sourced = (source: string) => parseProjectFile(`---\n${frontMatter(source)}\n---\n## A\nB\n`, 'm.md');
  assert.deepEqual(sourced('M docs (m.example/docs)').source, ['M docs (m.example/docs)']);
  assert.deepEqual(sourced('[M docs, M whitepaper]').source, ['M docs', 'M whitepaper']);
  assert.throws(() => sourced('[]'), { message: /^front matter source: / });
  assert.throws(
    () => parseProjectFile('---\nname: M\ncategory: x\nlinks: {website: https://m.example}\nas_of: June 2025\n---\n## A\nB\n', 'm.md'),
    { message: /^front matter as_of: / },
  );
});

test('terms: stop words dropped, light stemming meets inflections, symbols kept', () => {
  assert.deepEqual(queryTerms('What is the stETH staking fee?'), ['steth', 'stak', 'fee']);
  for (const [a, b] of [
    ['stake', 'staking'],
    ['staked', 'stakes'],
    ['supply', 'suppliers'],
    ['swap', 'swapping'],
    ['address', 'addresses'],
    ['liquidate', 'liquidation'],
  ]) {
    assert.equal(normalizeTerm(a), normalizeTerm(b), `${a} ~ ${b}`);
  }
  assert.deepEqual(['UNI', 'MKR', 'ENS', 'gas', 'daily', '2015', 'a', 'the'].map(normalizeTerm), [
    'uni',
    'mkr',
    'ens',
    'gas',
    'daili',
    '2015',
    null,
    null,
  ]);
});

test('snippet: the sentence with most matched terms, a short one joined by the next, long text cut at a word', () => {
  const text = 'Uniswap is a DEX. UNI is the governance token. It has a fixed supply.';
  assert.equal(bestSnippet(text, new Set(['governanc', 'token'])), 'UNI is the governance token. It has a fixed supply.');
  assert.equal(
    bestSnippet('- Website: https://x.example\n- Docs: https://docs.x.example', new Set(['doc'])),
    'Docs: https://docs.x.example',
  );
  const long = `${'word '.repeat(100)}end.`;
  const cut = bestSnippet(long, new Set(['word']), 50);
  assert.ok(cut.length <= 50 && cut.endsWith('…'), cut);
  assert.equal(bestSnippet('', new Set(['x'])), '');
});
