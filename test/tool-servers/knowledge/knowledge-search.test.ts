import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { pino } from 'pino';
import { createKnowledgeServer } from '../../../tool-servers/knowledge/server.js';
import type { KnowledgeHit } from '../../../tool-servers/knowledge/knowledge-index.js';

type Hit = KnowledgeHit;

interface Connected {
  call(
    args: Record<string, unknown>,
  ): Promise<{ isError: boolean; results: Hit[]; error?: { code: string; message: string; param?: string } }>;
  client: Client;
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The knowledge server in-process over a linked in-memory pair, with its log lines captured. */
async function connect(env: Record<string, string | undefined>, cwd?: string): Promise<Connected> {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const server = createKnowledgeServer({ env, cwd, logger: pino({ level: 'debug', base: undefined }, sink) });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'knowledge-test', version: '1.0.0' });
  await client.connect(clientTransport);
  return {
    client,
    logs,
    async call(args) {
      const result = await client.callTool({ name: 'knowledge_search', arguments: args });
      if (result.isError) {
        const text = (result.content as Array<{ text: string }>)[0].text;
        return {
          isError: true,
          results: [],
          error: (JSON.parse(text) as { error: { code: string; message: string; param?: string } }).error,
        };
      }
      const structured = result.structuredContent as { query: string; results: Hit[] };
      assert.equal(structured.query, String(args.query).trim());
      return { isError: false, results: structured.results };
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}

const REPO_CORPUS = join(process.cwd(), 'config/knowledge');
const corpusText = (file: string) => readFileSync(join(REPO_CORPUS, file), 'utf8');

describe('knowledge_search over the real corpus', () => {
  let knowledge: Connected;

  before(async () => {
    knowledge = await connect({ KNOWLEDGE_DIR: REPO_CORPUS });
  });
  after(async () => {
    await knowledge?.close();
  });

  test('the server lists knowledge_search with its input schema', async () => {
    const { tools } = await knowledge.client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['knowledge_search'],
    );
    assert.deepEqual(tools[0].inputSchema.required, ['query']);
    assert.deepEqual(Object.keys(tools[0].inputSchema.properties ?? {}), ['query', 'project', 'limit']);
  });

  test('clear questions rank the passage that answers them first', async () => {
    const cases: Array<[string, string, string]> = [
      ['What is a flash loan?', 'Aave', 'How it works'],
      ['How many SKY do I get for one MKR?', 'Sky', 'Token'],
      ['When did Ethereum switch to proof of stake?', 'Ethereum', 'How it works'],
      ['What happens if I forget to renew my ENS name?', 'ENS', 'Risks'],
      ['What is veCRV and how long can I lock CRV?', 'Curve', 'Token'],
      ['What was the Vyper reentrancy exploit?', 'Curve', 'Risks'],
      ['Who can veto ZKsync proposals?', 'zkSync', 'Governance'],
      ['Is Polygon PoS a rollup or a sidechain?', 'Polygon', 'How it works'],
    ];
    for (const [question, project, section] of cases) {
      const { results } = await knowledge.call({ query: question });
      assert.deepEqual([results[0]?.project, results[0]?.section], [project, section], question);
    }
  });

  test("a hit carries project, title, section, a bounded snippet, a score, its source and the page's as_of date", async () => {
    const { results } = await knowledge.call({ query: 'How many SKY do I get for one MKR?', limit: 1 });
    assert.equal(results.length, 1);
    const [hit] = results;
    assert.deepEqual(Object.keys(hit), ['project', 'title', 'section', 'snippet', 'score', 'source_url', 'as_of']);
    assert.equal(hit.title, 'Sky — Token');
    assert.equal(hit.source_url, 'https://developers.sky.money');
    assert.equal(hit.as_of, '2025-06-01');
    assert.equal(
      hit.snippet,
      'SKY is the new governance token; MKR can be converted at a rate of 1 MKR to 24,000 SKY. DAI and USDS are the stablecoins, not governance tokens.',
    );
    assert.ok(hit.score > 0);
    // Governance sections point at the governance forum when the page lists one.
    const governance = await knowledge.call({ query: 'who votes on Uniswap proposals', limit: 1 });
    assert.deepEqual([governance.results[0].section, governance.results[0].source_url], ['Governance', 'https://gov.uniswap.org']);
  });

  test('snippets stay within 320 characters and come from the passage text', async () => {
    const { results } = await knowledge.call({ query: 'how does Ethereum proof of stake work with validators', limit: 5 });
    assert.ok(results.length >= 3);
    for (const hit of results) {
      assert.ok(hit.snippet.length > 0 && hit.snippet.length <= 320, hit.snippet);
      const file = corpusText(`${hit.project.toLowerCase().replace(/ /g, '-')}.md`).replace(/\s+/g, ' ');
      assert.ok(file.includes(hit.snippet.replace(/…$/, '')), `${hit.title}: ${hit.snippet}`);
    }
    const scores = results.map((hit) => hit.score);
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
    );
  });

  test('token symbols and aliases find their project', async () => {
    const cases: Array<[string, string]> = [
      ['UNI', 'Uniswap'],
      ['stETH', 'Lido'],
      ['wstETH', 'Lido'],
      ['MKR', 'Sky'],
      ['Maker vaults', 'Sky'],
      ['MakerDAO governance', 'Sky'],
      ['Warpcast', 'Farcaster'],
      ['GRT', 'The Graph'],
      ['Gnosis Safe', 'Safe'],
      ['Matic Network', 'Polygon'],
    ];
    for (const [query, project] of cases) {
      const { results } = await knowledge.call({ query });
      assert.ok(results.length > 0, query);
      assert.equal(results[0].project, project, query);
    }
  });

  test('prefix and typo tolerance: a misspelt question still finds its passage', async () => {
    const { results } = await knowledge.call({ query: 'how does uniswap concentated liqudity work' });
    assert.deepEqual([results[0].project, results[0].section], ['Uniswap', 'How it works']);
    const prefix = await knowledge.call({ query: 'restak slash' });
    assert.equal(prefix.results[0].project, 'EigenLayer');
  });

  test('project filter: by name or alias, any case, only that project', async () => {
    for (const project of ['Lido', 'lido', 'LIDO FINANCE']) {
      const { results } = await knowledge.call({ query: 'governance token holders vote', project });
      assert.ok(results.length > 0, project);
      assert.deepEqual([...new Set(results.map((hit) => hit.project))], ['Lido'], project);
    }
    const unfiltered = await knowledge.call({ query: 'governance token holders vote', limit: 20 });
    assert.ok(new Set(unfiltered.results.map((hit) => hit.project)).size > 1);
    const maker = await knowledge.call({ query: 'liquidation', project: 'makerdao' });
    assert.deepEqual([...new Set(maker.results.map((hit) => hit.project))], ['Sky']);
  });

  test('an unknown project is invalid_arguments naming the known projects', async () => {
    const { isError, error } = await knowledge.call({ query: 'consensus', project: 'Solana' });
    assert.equal(isError, true);
    assert.deepEqual(error, {
      code: 'invalid_arguments',
      message:
        'Unknown project "Solana". Known projects: 1inch, Aave, Across, Arbitrum, Base, Chainlink, Compound, CoW Protocol, ' +
        'Curve, EigenDA, EigenLayer, ENS, Ethena, Ethereum, Farcaster, LayerZero, Lido, Linea, Morpho, Optimism, Pendle, ' +
        'Polygon, Rocket Pool, Safe, Scroll, Sky, Starknet, The Graph, Uniswap, Wormhole, zkSync.',
      param: 'project',
    });
  });

  test('questions the corpus cannot answer return an empty list', async () => {
    for (const query of [
      'What will the weather be in Paris tomorrow?',
      'How does Bitcoin mining difficulty adjust?',
      "What is Solana's proof of history?",
      'How do Lightning Network payment channels route payments?',
      'What is it?',
    ]) {
      const { isError, results } = await knowledge.call({ query });
      assert.equal(isError, false, query);
      assert.deepEqual(results, [], query);
    }
  });

  test('a question about a name the corpus never uses is empty, unless a project is named or chosen too', async () => {
    for (const query of [
      'How do I bridge my tokens to Avalanche?',
      'What are the trading fees on PancakeSwap?',
      'How do I open an account on Binance?',
    ]) {
      assert.deepEqual((await knowledge.call({ query })).results, [], query);
    }
    const named = await knowledge.call({ query: 'Can I bridge from Avalanche to Arbitrum?' });
    assert.deepEqual([named.results[0]?.project, named.results[0]?.section], ['Arbitrum', 'How it works']);
    const chosen = await knowledge.call({ query: 'How do I bridge my tokens to Avalanche?', project: 'Polygon' });
    assert.deepEqual([chosen.results[0]?.project, chosen.results[0]?.section], ['Polygon', 'How it works']);
  });

  test('a lower-case word no passage contains guards like a foreign name, unless the question names a project', async () => {
    // "bitcoin", "osmosis", "sui" (only a prefix of "suite"), "sonic" are in no page; the bridge, swap and airdrop
    // passages share only common words with these questions.
    const nearMisses = [
      'how do i bridge ETH to bitcoin',
      'how does osmosis swap work',
      'how to bridge from sui to ethereum',
      'sonic chain airdrop',
    ];
    for (const query of nearMisses) {
      assert.deepEqual((await knowledge.call({ query })).results, [], query);
    }
    // The one passage about Bybit answers however the rest is worded ("hack" is in no page either).
    const bybit = await knowledge.call({ query: 'What happened in the Bybit hack?' });
    assert.deepEqual([bybit.results[0]?.project, bybit.results[0]?.section], ['Safe', 'Risks']);
    // A page that does answer a cross-chain question answers it.
    const solana = await knowledge.call({ query: 'How do I bridge ETH to Solana?' });
    assert.equal(solana.results[0]?.project, 'Wormhole');
  });

  test('a known coin the corpus never mentions, typed in lower case, guards like a foreign name', async () => {
    // "marinade", "synthetix", "binance" are coins of the cryptocurrencies package's list and in no page;
    // "stake", "staking" and "fees" alone would reach Lido and 1inch.
    for (const query of ['how do i stake sol with marinade', 'synthetix staking snx', 'binance withdrawal fees']) {
      assert.deepEqual((await knowledge.call({ query })).results, [], query);
    }
    // Naming a project of the corpus beside it still answers from that project.
    const named = await knowledge.call({ query: 'can i bridge from binance smart chain to arbitrum' });
    assert.equal(named.results[0]?.project, 'Arbitrum');
  });

  test('an everyday word that is an outside coin guards beside a word saying so; a two-letter alias word names nothing', async () => {
    // "blast" and "yearn" are everyday words and coins; "l2" is only the kind of thing Base's alias "Coinbase L2" is.
    for (const query of ['is blast l2 safe to use', 'yearn vault hack what happened']) {
      assert.deepEqual((await knowledge.call({ query })).results, [], query);
    }
    const base = await knowledge.call({ query: 'is base l2 safe to use' });
    assert.deepEqual([base.results[0]?.project, base.results[0]?.section], ['Base', 'Risks']);
  });

  test('fillers say nothing, a coin is a token, and a Links passage ranks first only when links are asked for', async () => {
    const cases: Array<[string, string, string]> = [
      ['what does chainlink actually do', 'Chainlink', 'Overview'],
      ['does farcaster have a coin', 'Farcaster', 'Token'],
      ['what is pendle finance', 'Pendle', 'Overview'],
      ['pendle docs', 'Pendle', 'Links'],
    ];
    for (const [query, project, section] of cases) {
      const { results } = await knowledge.call({ query });
      assert.deepEqual([results[0]?.project, results[0]?.section], [project, section], query);
    }
  });

  test('an unknown short word met only as the start of a longer one is no specific match', async () => {
    // "atom" is only the start of "atomic", "perp" of "perpetual": with "ibc" and "hyperliquid" in no page,
    // the rest of each question is common words.
    for (const query of ['how to send atom over ibc', 'hyperliquid perps funding rate']) {
      assert.deepEqual((await knowledge.call({ query })).results, [], query);
    }
  });

  test('live market data, contact details and company records are never answered from a page', async () => {
    for (const query of [
      'what is the price of eth right now',
      'lido apy today',
      'coinbase exchange customer support number',
      'uniswap office address',
      'how many employees does chainlink labs have',
    ]) {
      assert.deepEqual((await knowledge.call({ query })).results, [], query);
      assert.deepEqual((await knowledge.call({ query, project: 'Lido' })).results, [], `${query} (project chosen)`);
    }
    // The figure without a time asks how it works.
    const oracle = await knowledge.call({ query: 'how does chainlink get the eth price' });
    assert.equal(oracle.results[0]?.project, 'Chainlink');
  });

  test('"SAFE" in capitals and a safe followed by what it is name the project, not the adjective', async () => {
    const token = await knowledge.call({ query: 'what is the SAFE token for' });
    assert.deepEqual([token.results[0]?.project, token.results[0]?.section], ['Safe', 'Token']);
    const risky = await knowledge.call({ query: 'is starknet safe' });
    assert.deepEqual([risky.results[0]?.project, risky.results[0]?.section], ['Starknet', 'Risks']);
  });

  test('incidents are found however they are called: hacked, exploited, a bug', async () => {
    const compound = await knowledge.call({ query: 'has compound ever been exploited' });
    assert.deepEqual([compound.results[0]?.project, compound.results[0]?.section], ['Compound', 'Risks']);
    const aave = await knowledge.call({ query: 'has aave ever been hacked?' });
    assert.deepEqual([aave.results[0]?.project, aave.results[0]?.section], ['Aave', 'Risks']);
  });

  test('a name counts only when typed (or mistyped from 5 letters), and an alias word that qualifies the name never', async () => {
    // "bored" would reach Pendle's alias Boros as a prefix, "vault" is only Morpho Vaults' qualifier.
    for (const query of ['How much is a Bored Ape NFT worth?', "What's the best hardware wallet for storing crypto?"]) {
      assert.deepEqual((await knowledge.call({ query })).results, [], query);
    }
    const typo = await knowledge.call({ query: 'what do operators do on eigenlayr' });
    assert.equal(typo.results[0]?.project, 'EigenLayer');
  });

  test('a partial match on words common across the corpus is not an answer; a full one is', async () => {
    // Lower case, so no word looks like a name: "trading" and "fees" are on many pages, "pancakeswap" on none.
    assert.deepEqual((await knowledge.call({ query: 'what are the trading fees on pancakeswap' })).results, []);
    assert.equal((await knowledge.call({ query: 'governance token holders vote' })).results.length, 5);
  });

  test('casual phrasing reaches the words of the pages, and the section a question asks about ranks first', async () => {
    const cases: Array<[string, string, string]> = [
      ['whos behind base', 'Base', 'Overview'],
      ['who made aave', 'Aave', 'Overview'],
      ['who wrote the chainlink whitepaper', 'Chainlink', 'Overview'],
      ['What is EigenDA?', 'EigenDA', 'Overview'],
      ['is starknet safe', 'Starknet', 'Risks'],
      ['when did starknet launch', 'Starknet', 'Overview'],
      ['How often does my stETH balance go up?', 'Lido', 'How it works'],
      ['Has Polygon PoS ever gone down?', 'Polygon', 'Risks'],
      ['If my ENS name lapses, how long until somebody else can take it?', 'ENS', 'Risks'],
    ];
    for (const [question, project, section] of cases) {
      const { results } = await knowledge.call({ query: question });
      assert.deepEqual([results[0]?.project, results[0]?.section], [project, section], question);
    }
  });

  test('limit bounds the results; bad arguments are invalid_arguments with the field', async () => {
    const { results } = await knowledge.call({ query: 'governance token', limit: 2 });
    assert.equal(results.length, 2);
    const defaults = await knowledge.call({ query: 'governance token' });
    assert.equal(defaults.results.length, 5);
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ query: '' }, 'query', 'query: Too small: expected string to have >=1 characters'],
      [{ query: '   ' }, 'query', 'query: Too small: expected string to have >=1 characters'],
      [{ query: 'x', limit: 0 }, 'limit', 'limit: Too small: expected number to be >=1'],
      [{ query: 'x', limit: 21 }, 'limit', 'limit: Too big: expected number to be <=20'],
      [{ query: 'x', limit: 2.5 }, 'limit', 'limit: Invalid input: expected int, received number'],
      [{ query: 'x'.repeat(501) }, 'query', 'query: Too big: expected string to have <=500 characters'],
    ];
    for (const [args, param, message] of cases) {
      const response = await knowledge.call(args);
      assert.deepEqual(response.error, { code: 'invalid_arguments', message, param }, JSON.stringify(args).slice(0, 40));
    }
  });
});

describe('an operator-managed corpus folder', () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-knowledge-'));
    copyFileSync(join(REPO_CORPUS, 'uniswap.md'), join(dir, 'uniswap.md'));
    copyFileSync(join(REPO_CORPUS, 'lido.md'), join(dir, 'lido.md'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('a project file dropped into the folder is searchable after a restart', async () => {
    const before = await connect({ KNOWLEDGE_DIR: dir });
    assert.deepEqual((await before.call({ query: 'Gnosis Chain xDAI validators' })).results, []);
    await before.close();

    writeFileSync(join(dir, 'gnosis-chain.md'), GNOSIS_CHAIN);
    const restarted = await connect({ KNOWLEDGE_DIR: dir });
    const { results } = await restarted.call({ query: 'Gnosis Chain xDAI validators' });
    assert.deepEqual(
      [results[0].project, results[0].section, results[0].source_url],
      ['Gnosis Chain', 'How it works', 'https://docs.gnosischain.com'],
    );
    const byAlias = await restarted.call({ query: 'validators', project: 'xDai Chain' });
    assert.deepEqual([...new Set(byAlias.results.map((hit) => hit.project))], ['Gnosis Chain']);
    assert.ok(restarted.logs.some((line) => line.msg === 'knowledge corpus loaded' && line.projects === 3));
    await restarted.close();
    rmSync(join(dir, 'gnosis-chain.md'));
  });

  test('malformed files are logged by name and skipped; the rest still loads', async () => {
    const broken: Record<string, string> = {
      'no-front-matter.md': '# Just a title\n\n## Overview\nText.\n',
      'bad-yaml.md': '---\nname: [unclosed\n---\n## Overview\nText.\n',
      'no-category.md': '---\nname: Nameless\nlinks: {website: https://example.org}\nas_of: 2025-01-01\n---\n## Overview\nText.\n',
      'bad-link.md': '---\nname: Linky\ncategory: x\nlinks: {website: not a url}\nas_of: 2025-01-01\n---\n## Overview\nText.\n',
      'no-sections.md': '---\nname: Empty\ncategory: x\nlinks: {website: https://example.org}\nas_of: 2025-01-01\n---\nNo headings here.\n',
      'zz-uniswap-copy.md': corpusText('uniswap.md'),
    };
    for (const [file, text] of Object.entries(broken)) writeFileSync(join(dir, file), text);
    const knowledge = await connect({ KNOWLEDGE_DIR: dir });
    const skipped = knowledge.logs.filter((line) => line.level === 40).map((line) => [line.file, line.reason, line.msg]);
    assert.deepEqual(skipped, [
      ['bad-link.md', 'front matter links.website: Invalid URL', 'skipping malformed knowledge file bad-link.md'],
      ['bad-yaml.md', skipped.find((s) => s[0] === 'bad-yaml.md')?.[1], 'skipping malformed knowledge file bad-yaml.md'],
      [
        'no-category.md',
        'front matter category: Invalid input: expected string, received undefined',
        'skipping malformed knowledge file no-category.md',
      ],
      [
        'no-front-matter.md',
        'no YAML front matter (the file must start with a --- block)',
        'skipping malformed knowledge file no-front-matter.md',
      ],
      ['no-sections.md', 'no "## " sections with text', 'skipping malformed knowledge file no-sections.md'],
      [
        'zz-uniswap-copy.md',
        'project name "Uniswap" is already defined in uniswap.md',
        'skipping malformed knowledge file zz-uniswap-copy.md',
      ],
    ]);
    assert.match(String(skipped[1][1]), /^front matter is not valid YAML: /);
    assert.ok(knowledge.logs.some((line) => line.msg === 'knowledge corpus loaded' && line.projects === 2));
    assert.equal((await knowledge.call({ query: 'stETH' })).results[0].project, 'Lido');
    await knowledge.close();
    for (const file of Object.keys(broken)) rmSync(join(dir, file));
  });

  test('a relative KNOWLEDGE_DIR resolves against the working directory; the default is config/knowledge', async () => {
    const relative = await connect({ KNOWLEDGE_DIR: 'config/knowledge' }, process.cwd());
    assert.equal((await relative.call({ query: 'UNI' })).results[0].project, 'Uniswap');
    await relative.close();
    const defaulted = await connect({}, process.cwd());
    assert.equal((await defaulted.call({ query: 'Farcaster ID' })).results[0].project, 'Farcaster');
    await defaulted.close();
  });

  test('a missing folder is logged and every search answers empty', async () => {
    const missing = join(dir, 'does-not-exist');
    const knowledge = await connect({ KNOWLEDGE_DIR: missing });
    assert.ok(
      knowledge.logs.some(
        (line) => line.level === 50 && line.dir === missing && line.msg === 'knowledge folder cannot be read; the corpus is empty',
      ),
    );
    assert.deepEqual((await knowledge.call({ query: 'Uniswap' })).results, []);
    const filtered = await knowledge.call({ query: 'Uniswap', project: 'Uniswap' });
    assert.deepEqual(filtered.error, {
      code: 'invalid_arguments',
      message: 'Unknown project "Uniswap". Known projects: .',
      param: 'project',
    });
    await knowledge.close();
  });
});

const GNOSIS_CHAIN = `---
name: Gnosis Chain
aliases: [xDai Chain, Gnosis]
token: GNO
category: layer 1 blockchain
links:
  website: https://www.gnosischain.com
  docs: https://docs.gnosischain.com
as_of: 2025-06-01
---
# Gnosis Chain

## Overview
Gnosis Chain, formerly the xDai chain, is an EVM-compatible chain whose fees are paid in the xDAI stablecoin.

## How it works
Validators stake GNO on the beacon chain of Gnosis Chain and run the same client software as Ethereum validators.
`;
