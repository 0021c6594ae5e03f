import { normalizeTerm, queryTerms, tokenize } from './text-terms.js';

/**
 * How a question's casual words reach the words the corpus uses. Applied to queries only: the
 * pages are written in one register ("incubated by", "rebases daily", "outages"), people ask in
 * another ("who's behind", "go up", "gone down"). Each group is a set of words that answer the
 * same question; a query word from a group also looks for the others. The groups are about the
 * language of questions in general, not about any one project, so a page added by an operator
 * benefits from them as much as the shipped ones.
 */
const SYNONYM_GROUPS: readonly string[] = [
  // who is behind a project: the Overview sections say "founded by", "started by", "incubated by";
  // people ask "who made it", "who built it", "who wrote it"
  'behind founded founder founders team creator created invented inventor started incubated made built developed wrote author',
  // a balance or a value that goes up
  'increase grow grows rise rises accrue accrues rebase',
  // a network that stops
  'outage outages halt halted stall offline downtime',
  'fee fees cost costs charge charges',
  'risk risks risky danger dangerous unsafe secure security',
  'centralized centralised centralization censor censors censored censorship',
  // "when did it go live", "mainnet went live": pages say launched, opened or went live
  'launch launched launches opened live',
  // what went wrong: people say hacked or exploited for any incident, pages name the bug
  'hack hacked exploit exploited attack attacks drained theft stolen incident incidents bug bugs faulty',
  'lose losing lost loss',
  'lapse lapses lapsed expire expires expired',
  'somebody someone anybody anyone',
  'airdrop airdropped stakedrop distributed distribution',
  'unstake unstaking withdraw withdrawal withdrawals',
  'money funds',
  'vote votes voting decide decides',
  'inflation inflationary deflationary issuance',
  'keep keeps kept store stores stored',
  // "does it have a coin": pages say token
  'token tokens coin coins',
];

// Two-word phrases whose meaning no single word carries; rewritten before splitting.
const PHRASES: ReadonlyArray<[RegExp, string | ((phrase: string, ...groups: string[]) => string)]> = [
  [/\b(go|goes|going|went|gone)\s+up\b/gi, 'increase'],
  [/\b(go|goes|going|went|gone)\s+down\b/gi, 'outage'],
  [/\bwhite-?paper\b/gi, 'white paper'],
  // "is Starknet safe", "safe to use": the adjective, not the project Safe, which is written
  // SAFE (its token) or followed by what it is ("is the safe wallet audited").
  [
    /\b(is|are)(\s+(?:[\w.-]+\s+){1,3})(safe)\b(?!\s+(?:token|wallet|account|app|multisig|smart|dao|foundation)s?\b)/gi,
    (phrase: string, verb: string, between: string, safe: string) => (safe === 'SAFE' ? phrase : `${verb}${between}risk`),
  ],
  [/\b(how|it)\s+safe\b|\bsafe(\s+to\b)/gi, '$1 risk$2'],
];

const groupOf = new Map<string, string[]>();
for (const line of SYNONYM_GROUPS) {
  const terms = queryTerms(line);
  for (const term of terms) groupOf.set(term, terms);
}

/** One query word and the terms that satisfy it: the word itself first, then its synonyms. */
export interface QueryWord {
  term: string;
  alternatives: string[];
}

/**
 * The search terms of a question, each with the synonyms it accepts.
 *
 * @example
 * queryWords('whos behind base')
 * // [{ term: 'behind', alternatives: ['behind', 'found', 'founder', …] }, { term: 'bas', alternatives: ['bas'] }]
 */
export function queryWords(query: string): QueryWord[] {
  let text = query;
  // Two calls only because TypeScript's `replace` overloads take a string or a function, not either.
  for (const [pattern, replacement] of PHRASES)
    text = typeof replacement === 'string' ? text.replace(pattern, replacement) : text.replace(pattern, replacement);
  const words: QueryWord[] = [];
  const seen = new Set<string>();
  for (const raw of tokenize(text)) {
    const term = normalizeTerm(raw);
    if (!term || seen.has(term)) continue;
    seen.add(term);
    const group = groupOf.get(term) ?? [term];
    words.push({ term, alternatives: [term, ...group.filter((other) => other !== term)] });
  }
  return words;
}
