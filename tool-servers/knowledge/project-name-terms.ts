import type { CorpusProject } from './corpus.js';
import { queryTerms } from './text-terms.js';

/**
 * The terms of each project's name, aliases and token symbol that point at that project alone:
 * used by no other project's names, and rare in the pages. A term of the name or token symbol
 * may appear in the pages of under a quarter of the projects ("Uniswap", "UNI", "Arbitrum"); a
 * term of an alias must be rarer, under a tenth, since aliases carry everyday words ("Node" of
 * Edge & Node) that a question uses without meaning the project; the words that only qualify
 * the name in an alias ("Swap" of CoW Swap) never count. "Network" (Matic Network, Chainlink
 * Network) or "Maker" (stemmed like "make") do not qualify, so "Lightning Network" does not
 * count as naming Polygon.
 */
export function distinctiveNameTerms(projects: CorpusProject[]): Map<string, Set<string>> {
  const namesOf = new Map(projects.map((p) => [p.id, new Set(queryTerms([p.name, ...p.aliases, p.token ?? ''].join(' ')))]));
  const pagesWith = pagesWithTerm(projects);
  const distinctive = new Map<string, Set<string>>();
  for (const project of projects) {
    const primary = new Set(queryTerms([project.name, project.token ?? ''].join(' ')));
    const own = [...primary, ...aliasNameTerms(project, primary)].filter((term) => {
      const pages = pagesWith.get(term) ?? 0;
      if (pages >= projects.length / (primary.has(term) ? 4 : 10)) return false;
      return ![...namesOf].some(([otherId, other]) => otherId !== project.id && other.has(term));
    });
    distinctive.set(project.id, new Set(own));
  }
  return distinctive;
}

/**
 * The words of a project's aliases that are names in their own right. In an alias that repeats
 * the project's name ("Morpho Vaults", "CoW Swap", "Safe Wallet", "Across Bridge") the other words
 * only qualify that name: a question about vaults, swaps or wallets is not about the project.
 * Nor is a two-letter word of an alias a name ("L2" of Coinbase L2, "DA" of Eigen DA): those are
 * kinds of things ("is blast l2 safe" is not about Base), where a token symbol of two letters
 * ("OP") is a name.
 */
function aliasNameTerms(project: CorpusProject, primary: ReadonlySet<string>): string[] {
  return project.aliases.flatMap((alias) => {
    const terms = queryTerms(alias);
    return terms.some((term) => primary.has(term)) ? [] : terms.filter((term) => term.length >= 3);
  });
}

/**
 * The terms by which a question can point at each project, for judging whether a passage's match
 * is specific: the name and token symbol always (a question naming "Ethereum" is as specific as a
 * question can be, however many pages mention it), and the words of aliases that appear in the
 * pages of under a quarter of the projects ("stETH", "Unichain"; not "Bridge" of Across Bridge).
 */
export function ownNameTerms(projects: CorpusProject[]): Map<string, Set<string>> {
  const pagesWith = pagesWithTerm(projects);
  return new Map(
    projects.map((project) => {
      const primary = new Set(queryTerms([project.name, project.token ?? ''].join(' ')));
      const aliases = aliasNameTerms(project, primary).filter((term) => (pagesWith.get(term) ?? 0) < projects.length / 4);
      return [project.id, new Set([...primary, ...aliases])];
    }),
  );
}

/** How many project pages use each term in their text. */
function pagesWithTerm(projects: CorpusProject[]): Map<string, number> {
  const pagesWith = new Map<string, number>();
  for (const project of projects) {
    for (const term of new Set(queryTerms(project.sections.map((section) => section.text).join(' ')))) {
      pagesWith.set(term, (pagesWith.get(term) ?? 0) + 1);
    }
  }
  return pagesWith;
}
