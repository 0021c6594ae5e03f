import type { CorpusProject } from './corpus.js';
import { queryTerms } from './text-terms.js';

/**
 * The terms of each project's name, aliases and token symbol that point at that project alone:
 * used by no other project's names, and rare in the pages. A term of the name or token symbol
 * may appear in the pages of under a quarter of the projects ("Uniswap", "UNI", "Arbitrum"); a
 * term of an alias must be rarer, under a tenth, since multi-word aliases carry everyday words
 * ("Swap" of CoW Swap, "Wallet" of Safe Wallet, "Node" of Edge & Node) that a question uses
 * without meaning the project. "Network" (Matic Network, Chainlink Network) or "Maker" (stemmed
 * like "make") do not qualify, so "Lightning Network" does not count as naming Polygon.
 */
export function distinctiveNameTerms(projects: CorpusProject[]): Map<string, Set<string>> {
  const namesOf = new Map(projects.map((p) => [p.id, new Set(queryTerms([p.name, ...p.aliases, p.token ?? ''].join(' ')))]));
  const pagesWith = new Map<string, number>();
  for (const project of projects) {
    for (const term of new Set(queryTerms(project.sections.map((section) => section.text).join(' ')))) pagesWith.set(term, (pagesWith.get(term) ?? 0) + 1);
  }
  const distinctive = new Map<string, Set<string>>();
  for (const project of projects) {
    const primary = new Set(queryTerms([project.name, project.token ?? ''].join(' ')));
    const own = [...(namesOf.get(project.id) as Set<string>)].filter((term) => {
      const pages = pagesWith.get(term) ?? 0;
      if (pages >= projects.length / (primary.has(term) ? 4 : 10)) return false;
      return ![...namesOf].some(([otherId, other]) => otherId !== project.id && other.has(term));
    });
    distinctive.set(project.id, new Set(own));
  }
  return distinctive;
}

/**
 * The terms by which a question can point at each project, for judging whether a passage's match
 * is specific: the name and token symbol always (a question naming "Ethereum" is as specific as a
 * question can be, however many pages mention it), and the words of aliases that appear in the
 * pages of under a quarter of the projects ("stETH", "Unichain"; not "Bridge" of Across Bridge).
 */
export function ownNameTerms(projects: CorpusProject[]): Map<string, Set<string>> {
  const pagesWith = new Map<string, number>();
  for (const project of projects) {
    for (const term of new Set(queryTerms(project.sections.map((section) => section.text).join(' ')))) pagesWith.set(term, (pagesWith.get(term) ?? 0) + 1);
  }
  return new Map(
    projects.map((project) => {
      const primary = queryTerms([project.name, project.token ?? ''].join(' '));
      const aliases = queryTerms(project.aliases.join(' ')).filter((term) => (pagesWith.get(term) ?? 0) < projects.length / 4);
      return [project.id, new Set([...primary, ...aliases])];
    }),
  );
}
