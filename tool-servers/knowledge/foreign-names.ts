import { normalizeTerm, tokenize } from './text-terms.js';

/**
 * The names in `query` that the corpus has never heard of: words written as names (a capital
 * after the first word, an inner capital as in "PancakeSwap", or all capitals as in "ADA") whose
 * term appears nowhere in the corpus. A question about Avalanche, Binance or Tesla shares only
 * common words ("bridge", "account", "CEO") with the pages, and the name it is really about is
 * exactly the word no passage matches; unless the question also names a project, it is about
 * something else. The first word is left out, since every sentence starts with a capital; all
 * words are left out when the query is written all in capitals or in title case, where case
 * says nothing.
 *
 * @example
 * foreignNames('How do I bridge my tokens to Avalanche?', vocabulary) // ['avalanch']
 * foreignNames('how do i bridge to avalanche', vocabulary)            // []
 */
export function foreignNames(query: string, vocabulary: ReadonlySet<string>): string[] {
  const words = tokenize(query).filter((word) => /\p{L}/u.test(word));
  const lettersOnly = words.join('');
  if (lettersOnly === lettersOnly.toUpperCase()) return [];
  const capitalised = words.filter((word) => /^\p{Lu}/u.test(word)).length;
  if (words.length > 2 && capitalised === words.length) return [];

  const names: string[] = [];
  words.forEach((word, index) => {
    const looksLikeName = /^\p{Lu}/u.test(word) ? index > 0 || /\p{Lu}/u.test(word.slice(1)) : /\p{Lu}/u.test(word.slice(1));
    if (!looksLikeName) return;
    const term = normalizeTerm(word);
    if (term && !vocabulary.has(term) && !names.includes(term)) names.push(term);
  });
  return names;
}
