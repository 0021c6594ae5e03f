import type { CorpusProject } from './corpus.js';
import { queryTerms } from './text-terms.js';

/**
 * The terms of each project's name, aliases and token symbol that point at that project alone:
 * used by no other project's names and present in the pages of under a quarter of the projects.
 * "Uniswap", "UNI", "stETH" and "Maker" qualify; "Network" (Matic Network, Chainlink Network),
 * "Labs" or "chain" (Base chain) do not, so "Lightning Network" does not count as naming Polygon.
 */
export function distinctiveNameTerms(projects: CorpusProject[]): Map<string, Set<string>> {
  const namesOf = new Map(projects.map((p) => [p.id, new Set(queryTerms([p.name, ...p.aliases, p.token ?? ''].join(' ')))]));
  const pagesWith = new Map<string, number>();
  for (const project of projects) {
    for (const term of new Set(queryTerms(project.sections.map((section) => section.text).join(' ')))) pagesWith.set(term, (pagesWith.get(term) ?? 0) + 1);
  }
  const distinctive = new Map<string, Set<string>>();
  for (const [id, terms] of namesOf) {
    const own = [...terms].filter(
      (term) => (pagesWith.get(term) ?? 0) < projects.length / 4 && ![...namesOf].some(([otherId, other]) => otherId !== id && other.has(term)),
    );
    distinctive.set(id, new Set(own));
  }
  return distinctive;
}
