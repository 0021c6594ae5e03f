import MiniSearch, { type SearchResult } from 'minisearch';
import type { CorpusProject } from './corpus.js';
import { normalizeTerm, queryTerms, tokenize } from './text-terms.js';
import { bestSnippet } from './snippet.js';
import { distinctiveNameTerms } from './project-name-terms.js';

/** One search hit: a section of a project page. */
export interface KnowledgeHit {
  project: string;
  title: string;
  section: string;
  snippet: string;
  /** BM25+ score after field boosts, rounded to 3 decimals. Comparable within one query only. */
  score: number;
  source_url: string;
}

/**
 * When a hit counts as an answer. Calibrated on the calibration set of bench/knowledge-eval.json
 * (its held-out set measures how well that generalises): an unanswerable question usually shares
 * one or two incidental words with the corpus ("consensus", "proof"),
 * an answerable one shares most of its words with its passage, or names the project (name,
 * alias or token symbol) plus something about it.
 */
export interface RelevanceThreshold {
  /** Share of the query's terms the hit must match (exactly, by prefix or within typo distance)… */
  minCoverage: number;
  /** …unless it matches the project's name or alias and at least this many query terms in all. */
  minTermsWithProjectName: number;
  /**
   * Minimum score per query term, in units of the corpus's largest BM25 idf, so neither long
   * queries nor large corpora shift it.
   */
  minScorePerTerm: number;
  /** Once a query is answerable, further hits must score at least this share of the best one. */
  minRelativeScore: number;
}

export const DEFAULT_THRESHOLD: RelevanceThreshold = { minCoverage: 0.6, minTermsWithProjectName: 2, minScorePerTerm: 0.9, minRelativeScore: 0.25 };

export interface KnowledgeSearchOptions {
  /** Project id (file name) to search within; resolve names and aliases with resolveProject. */
  projectId?: string;
  limit?: number;
  threshold?: RelevanceThreshold;
}

/** A hit before thresholding, for calibration. */
export interface ScoredHit extends KnowledgeHit {
  projectId: string;
  /** Distinct query terms the hit matched. */
  matchedTerms: number;
  /** matchedTerms / query terms. */
  coverage: number;
  /** Whether a query term matched the project's name, alias or token symbol. */
  namesProject: boolean;
  scorePerTerm: number;
}

/** Whether `hit` passes `threshold`. */
export function isRelevant(hit: ScoredHit, threshold: RelevanceThreshold): boolean {
  if (hit.scorePerTerm < threshold.minScorePerTerm) return false;
  return hit.coverage >= threshold.minCoverage || (hit.namesProject && hit.matchedTerms >= threshold.minTermsWithProjectName);
}

export interface KnowledgeIndex {
  /** Project names, in file order. */
  readonly projectNames: string[];
  /** The project id named by `nameOrAlias` (name, alias or file id, any case), or undefined. */
  resolveProject(nameOrAlias: string): string | undefined;
  /** Hits above the relevance threshold, best first; [] when nothing answers the query. */
  search(query: string, options?: KnowledgeSearchOptions): KnowledgeHit[];
  /** Every candidate with its coverage and normalised score, best first (for the eval). */
  candidates(query: string, options?: Omit<KnowledgeSearchOptions, 'threshold'>): ScoredHit[];
}

interface Chunk {
  id: string;
  projectId: string;
  project: string;
  aliases: string;
  category: string;
  section: string;
  text: string;
  sourceUrl: string;
}

// Name and aliases (with the token symbol) are copied into every chunk of a project and boosted,
// so "stETH risks" finds Lido's Risks section even though its text may not repeat "stETH".
export const FIELD_BOOSTS = { project: 3, aliases: 2.5, section: 2, category: 1, text: 1 };

/**
 * Build the in-memory full-text index (MiniSearch, BM25+) over the sections of `projects`.
 *
 * @example
 * const index = createKnowledgeIndex(loadCorpus('config/knowledge'));
 * index.search('who can liquidate my Aave loan', { limit: 3 })[0].section; // 'How it works'
 */
export function createKnowledgeIndex(projects: CorpusProject[]): KnowledgeIndex {
  const chunks = new Map<string, Chunk>();
  const projectIdByName = new Map<string, string>();
  for (const project of projects) {
    for (const name of [project.id, project.name, ...project.aliases]) {
      const key = name.toLowerCase();
      if (!projectIdByName.has(key)) projectIdByName.set(key, project.id);
    }
    project.sections.forEach((section, index) => {
      const id = `${project.id}#${index}`;
      chunks.set(id, {
        id,
        projectId: project.id,
        project: project.name,
        aliases: [...project.aliases, project.token ?? ''].join(' '),
        category: project.category,
        section: section.heading,
        text: section.text,
        sourceUrl: sourceUrlFor(project, section.heading),
      });
    });
  }

  const nameTerms = distinctiveNameTerms(projects);
  const miniSearch = new MiniSearch<Chunk>({
    fields: ['project', 'aliases', 'category', 'section', 'text'],
    storeFields: [],
    tokenize,
    processTerm: normalizeTerm,
  });
  miniSearch.addAll([...chunks.values()]);
  const maxIdf = largestIdf(chunks.size);

  const candidates = (query: string, options: Omit<KnowledgeSearchOptions, 'threshold'> = {}): ScoredHit[] => {
    const terms = queryTerms(query);
    if (terms.length === 0 || chunks.size === 0) return [];
    const results = miniSearch.search(terms.join(' '), {
      // The query is already split and normalised: do not stem the stems again.
      tokenize: (text) => text.split(' '),
      processTerm: (term) => term,
      boost: FIELD_BOOSTS,
      prefix: (term) => term.length >= 3,
      // One typo from 5 letters, two from 8 (a swapped pair of letters counts as two).
      fuzzy: (term) => (term.length >= 8 ? 2 : term.length >= 5 ? 1 : false),
      combineWith: 'OR',
      filter: options.projectId ? (result) => chunks.get(result.id)?.projectId === options.projectId : undefined,
    });
    return results.slice(0, options.limit ?? results.length).map((result) => toHit(result, terms.length));
  };

  const toHit = (result: SearchResult, termCount: number): ScoredHit => {
    const chunk = chunks.get(result.id) as Chunk;
    const matchedTerms = new Set(result.queryTerms).size;
    return {
      project: chunk.project,
      projectId: chunk.projectId,
      title: `${chunk.project} — ${chunk.section}`,
      section: chunk.section,
      snippet: bestSnippet(chunk.text, new Set(result.terms)),
      score: Math.round(result.score * 1000) / 1000,
      source_url: chunk.sourceUrl,
      matchedTerms,
      coverage: matchedTerms / termCount,
      namesProject: Object.keys(result.match).some((term) => nameTerms.get(chunk.projectId)?.has(term)),
      scorePerTerm: result.score / termCount / maxIdf,
    };
  };

  return {
    projectNames: projects.map((project) => project.name),
    resolveProject: (nameOrAlias) => projectIdByName.get(nameOrAlias.trim().toLowerCase()),
    candidates,
    search(query, options = {}) {
      const threshold = options.threshold ?? DEFAULT_THRESHOLD;
      const all = candidates(query, { projectId: options.projectId });
      // Answerability is decided once per query, by its strongest hit; the weaker passages that
      // follow are kept while they score close enough to the best, so a passage that matched
      // fewer of the words still appears after the one that matched them all.
      const best = all.find((hit) => isRelevant(hit, threshold));
      if (!best) return [];
      return all
        .filter((hit) => hit.score >= best.score * threshold.minRelativeScore)
        .slice(0, options.limit ?? 5)
        .map(({ projectId: _p, matchedTerms: _m, coverage: _c, namesProject: _n, scorePerTerm: _s, ...hit }) => hit);
    },
  };
}

/**
 * BM25's largest inverse document frequency (a term found in one of `chunkCount` chunks).
 * Scores divided by it keep the threshold meaningful whether the folder holds 3 projects or 300.
 */
export function largestIdf(chunkCount: number): number {
  return Math.log(1 + (Math.max(chunkCount, 1) - 0.5) / 1.5);
}

// The governance forum answers governance questions better than the home page.
function sourceUrlFor(project: CorpusProject, heading: string): string {
  const links = project.links as Record<string, string>;
  if (/governance/i.test(heading) && links.governance) return links.governance;
  return links.docs ?? links.website;
}
