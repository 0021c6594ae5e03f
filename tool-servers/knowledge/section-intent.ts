import { queryTerms } from './text-terms.js';

/**
 * Which section a question is about, from the words that say so. Every page has the same
 * sections, and a question that names a project matches all of them on the project's name
 * (copied into each): "has Polygon PoS ever gone down" must prefer Risks over How it works, but
 * "down" alone says nothing a passage can match. A word here adds weight to its section's
 * passages at ranking time; it never decides whether the question is answerable.
 */
const INTENT_WORDS: Readonly<Record<string, string>> = {
  Token: 'token tokens coin coins tokenomics airdrop airdropped inflation inflationary issuance emissions symbol',
  Risks:
    'risk risks risky danger dangerous unsafe hack hacked exploit exploited attack lose losing lost loss scam wrong outage outages ' +
    'secure security centralized centralised censor censorship legit trust',
  Governance: 'vote votes voting voter dao governance govern governs proposal proposals decide decides veto controls',
  Overview: 'behind founded founder founders team created creator invented started history made wrote author launch launched',
  // not "link": it is also Chainlink's token
  Links: 'website websites site url docs documentation github repo repository repositories homepage',
};

// Phrases whose words are too common to be intent words on their own.
const INTENT_PHRASES: ReadonlyArray<[RegExp, string]> = [
  [/\b(go|goes|going|went|gone)\s+down\b/i, 'Risks'],
  [/\bwho\s+(can|could|decides?|controls?|runs?|approves?)\b/i, 'Governance'],
  // "safe" is also a project's name: only "is it safe", "how safe", "safe to …" ask about risk.
  [/\b(how|is\s+it|is\s+that|it)\s+safe\b|\bsafe\s+to\b/i, 'Risks'],
  [/\b(total|max|maximum|circulating)\s+supply\b/i, 'Token'],
  // "who built it", "built by": the people, not "built on the OP Stack".
  [/\bbuilt\s+by\b|\bwho\b.*\bbuilt\b/i, 'Overview'],
  // "how do I bridge", "how does X work": the mechanics.
  [/\bhow\s+(do|does|can|is|are)\b/i, 'How it works'],
];

const sectionOf = new Map<string, string>();
for (const [section, words] of Object.entries(INTENT_WORDS)) {
  for (const term of queryTerms(words)) sectionOf.set(term, section);
}

/** How much a passage of an intended section is boosted: enough to reorder one project's sections, not to pull in another project. */
export const INTENT_BOOST = 1.5;

/**
 * The section headings `query` asks about (none, one or several).
 *
 * @example
 * sectionIntent('is the Aave token inflationary?') // Set { 'Token' }
 * sectionIntent('who can freeze zkSync?')          // Set { 'Governance' }
 */
export function sectionIntent(query: string): Set<string> {
  const sections = new Set<string>();
  for (const term of queryTerms(query)) {
    const section = sectionOf.get(term);
    if (section) sections.add(section);
  }
  for (const [pattern, section] of INTENT_PHRASES) if (pattern.test(query)) sections.add(section);
  return sections;
}
