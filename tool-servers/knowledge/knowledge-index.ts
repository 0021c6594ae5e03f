import MiniSearch, { type SearchResult } from 'minisearch';
import type { CorpusProject } from './corpus.js';
import { normalizeTerm, queryTerms, tokenize } from './text-terms.js';
import { bestSnippet } from './snippet.js';
import { distinctiveNameTerms, ownNameTerms } from './project-name-terms.js';
import { queryWords, type QueryWord } from './query-words.js';
import { INTENT_BOOST, sectionIntent } from './section-intent.js';
import { foreignNames } from './foreign-names.js';
import { outsideNames } from './outside-names.js';
import { outOfScope } from './out-of-scope.js';
import { createTermWeights, largestIdf } from './term-weights.js';

/** One search hit: a section of a project page. */
export interface KnowledgeHit {
  project: string;
  title: string;
  section: string;
  snippet: string;
  /** BM25+ score after field boosts, rounded to 3 decimals. Comparable within one query only. */
  score: number;
  source_url: string;
  /** The date the page's facts were checked (its front matter's as_of), so a reader can judge how fresh they are. */
  as_of: string;
}

/**
 * When a hit counts as an answer. Calibrated on the calibration sets of bench/knowledge-eval.json
 * (its heldout_v2 set measures how well that generalises): an unanswerable question usually
 * shares one or two incidental, common words with the corpus ("trading", "fees", "account"), an
 * answerable one shares most of its specific words with its passage, or names the project (name,
 * alias or token symbol) plus something about it.
 */
export interface RelevanceThreshold {
  /** Share of the query's words the hit must match (exactly, by prefix, within typo distance or by a synonym)… */
  minCoverage: number;
  /** …unless it matches the project's name or alias and at least this many query terms in all. */
  minTermsWithProjectName: number;
  /**
   * Minimum score per query term, in units of the corpus's largest BM25 idf, so neither long
   * queries nor large corpora shift it.
   */
  minScorePerTerm: number;
  /**
   * A hit that leaves some query words unmatched must match at least one word this specific
   * (idf weight, 0–1) or its own project's name: a passage that shares only words found all
   * over the corpus ("token", "fee", "open") with a longer question matched by accident.
   */
  minDistinctiveWeight: number;
  /** Once a query is answerable, further hits must score at least this share of the best one. */
  minRelativeScore: number;
  /**
   * When the query has a word no passage contains and names no project, the hit must match a
   * word this specific (idf weight, 0–1; its own project's name does not count here, since the
   * question names no project distinctly): "what happened in the Bybit hack" is answered by the
   * one passage about Bybit, "bridge ETH to bitcoin" is not answered by a bridge page.
   */
  minDistinctiveWeightBesideUnknownWord: number;
}

export const DEFAULT_THRESHOLD: RelevanceThreshold = {
  minCoverage: 0.6,
  minTermsWithProjectName: 2,
  minScorePerTerm: 0.75,
  minDistinctiveWeight: 0.65,
  minRelativeScore: 0.25,
  minDistinctiveWeightBesideUnknownWord: 0.85,
};

export interface KnowledgeSearchOptions {
  /** Project id (file name) to search within; resolve names and aliases with resolveProject. */
  projectId?: string;
  limit?: number;
  threshold?: RelevanceThreshold;
}

/** A hit before thresholding, for calibration. */
export interface ScoredHit extends KnowledgeHit {
  projectId: string;
  /** Distinct query words the hit matched (by the word or a synonym). */
  matchedTerms: number;
  /** matchedTerms / query words. */
  coverage: number;
  /** The largest idf weight among the matched words; 1 when they include the name of the hit's project or the search is filtered on it. */
  distinctiveWeight: number;
  /** The largest idf weight among the matched words, names or not. */
  rarestMatchWeight: number;
  /** Whether a query term matched the project's name, alias or token symbol. */
  namesProject: boolean;
  scorePerTerm: number;
}

/** Whether `hit` passes `threshold`. */
export function isRelevant(hit: ScoredHit, threshold: RelevanceThreshold): boolean {
  if (hit.scorePerTerm < threshold.minScorePerTerm) return false;
  // A passage that matches every word of the question answers it however common the words
  // ("governance token"). One that leaves words out must have matched a specific one, or its
  // match is incidental.
  if (hit.coverage < 1 && hit.distinctiveWeight < threshold.minDistinctiveWeight) return false;
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

/** One indexed passage: a section of a project page, with the project's names copied in. */
export interface Chunk {
  id: string;
  projectId: string;
  project: string;
  aliases: string;
  category: string;
  section: string;
  text: string;
  sourceUrl: string;
  asOf: string;
}

// Name and aliases (with the token symbol) are copied into every chunk of a project and boosted,
// so "stETH risks" finds Lido's Risks section even though its text may not repeat "stETH".
export const FIELD_BOOSTS = { project: 3, aliases: 2.5, section: 2, category: 1, text: 1 };

/** What a synonym's match is worth next to the word the user typed. */
export const SYNONYM_WEIGHT = 0.5;

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
    for (const chunk of sectionChunks(project)) chunks.set(chunk.id, chunk);
  }

  const nameTerms = distinctiveNameTerms(projects);
  // A project's name is copied into each of its passages and often mentioned on other pages
  // ("Ethereum"), which makes it look common; a question naming the passage's own project is
  // still as specific as a question can be.
  const ownNames = ownNameTerms(projects);
  const weights = createTermWeights(
    [...chunks.values()].map(
      (chunk) => new Set(queryTerms([chunk.project, chunk.aliases, chunk.category, chunk.section, chunk.text].join(' '))),
    ),
  );
  const miniSearch = new MiniSearch<Chunk>({
    fields: ['project', 'aliases', 'category', 'section', 'text'],
    storeFields: [],
    tokenize,
    processTerm: normalizeTerm,
  });
  miniSearch.addAll([...chunks.values()]);
  const maxIdf = largestIdf(chunks.size);
  const outside = outsideNames(weights.vocabulary);

  const rank = (query: string, options: Omit<KnowledgeSearchOptions, 'threshold'> = {}): Ranking => {
    const words = queryWords(query);
    if (words.length === 0 || chunks.size === 0) return { hits: [], unknownWords: [] };
    // The words as typed get prefix and typo matching; their synonyms only match exactly and
    // count for less, so a synonym helps a passage without outranking one that uses the word.
    const typed = new Set(words.map((word) => word.term));
    const searched = [...typed, ...new Set(words.flatMap((word) => word.alternatives.slice(1)).filter((term) => !typed.has(term)))];
    const intended = sectionIntent(query);
    // A question that only names a project ("what is EigenDA", "what is pendle finance") asks what it is.
    const onlyNames = (names: ReadonlySet<string>) =>
      words.some((word) => names.has(word.term)) && words.every((word) => names.has(word.term) || NAME_SUFFIXES.has(word.term));
    if ([...ownNames.values()].some(onlyNames)) intended.add('Overview');
    const results = miniSearch.search(searched.join(' '), {
      // The query is already split and normalised: do not stem the stems again.
      tokenize: (text) => text.split(' '),
      processTerm: (term) => term,
      boost: FIELD_BOOSTS,
      boostTerm: (term) => (typed.has(term) ? 1 : SYNONYM_WEIGHT),
      boostDocument: (id) => sectionBoost(intended, (chunks.get(id) as Chunk).section),
      prefix: (term) => typed.has(term) && term.length >= 3,
      // One typo from 5 letters, two from 8 (a swapped pair of letters counts as two).
      fuzzy: (term) => (!typed.has(term) ? false : term.length >= 8 ? 2 : term.length >= 5 ? 1 : false),
      combineWith: 'OR',
      filter: options.projectId ? (result) => chunks.get(result.id)?.projectId === options.projectId : undefined,
    });
    // A short word found only as the prefix of longer ones ("sui" in "suite") is unknown too.
    const passageTerms = new Set(results.flatMap((result) => result.terms));
    const known = (word: QueryWord) =>
      word.alternatives.some((term) => passageTerms.has(term)) || [...passageTerms].some((term) => namedBy(word.term, term));
    // Whether a passage term was typed as a name, decided once per term for all the passages.
    const typedName = new Map<string, boolean>();
    const isTypedName = (term: string) => {
      let named = typedName.get(term);
      if (named === undefined) typedName.set(term, (named = words.some((word) => namedBy(word.term, term))));
      return named;
    };
    const knownWords: QueryWord[] = [];
    const unknownWords: string[] = [];
    for (const word of words) {
      if (known(word)) knownWords.push(word);
      else unknownWords.push(word.term);
    }
    return {
      hits: results
        .slice(0, options.limit ?? results.length)
        .map((result) => toHit(result, words, knownWords, isTypedName, options.projectId !== undefined)),
      unknownWords,
    };
  };

  // A caller that filters on a project has named it as surely as the question could.
  const toHit = (
    result: SearchResult,
    words: QueryWord[],
    knownWords: QueryWord[],
    isTypedName: (term: string) => boolean,
    projectChosen: boolean,
  ): ScoredHit => {
    const chunk = chunks.get(result.id) as Chunk;
    const hitTerms = new Set(result.queryTerms);
    const matches = (word: QueryWord) => word.alternatives.some((term) => hitTerms.has(term));
    const matched = words.filter(matches);
    // A word matched through a synonym is only as specific as the less specific of the two: "hack"
    // (in no passage) met as "exploit", or "airdrop" met as the rare "stakedrop", is a common match.
    // An unknown word met only as the start of a longer one ("atom" in "atomic", "perp" in
    // "perpetual") says nothing about the passage.
    const rarestMatchWeight = Math.max(
      0,
      ...knownWords
        .filter(matches)
        .flatMap((word) =>
          word.alternatives.filter((term) => hitTerms.has(term)).map((term) => Math.min(weights.weight(term), weights.weight(word.term))),
        ),
    );
    // A name counts when it was typed, or reached from a long enough word by a typo or as its
    // prefix ("arbitrm", "eigenlay"); a short prefix ("eth" of "ETHLend", "bor" of "Boros") is chance.
    const typedNames = Object.keys(result.match).filter(isTypedName);
    return {
      project: chunk.project,
      projectId: chunk.projectId,
      title: `${chunk.project} — ${chunk.section}`,
      section: chunk.section,
      // Computed when read: of the dozens of candidates, only the few returned need one.
      get snippet() {
        return bestSnippet(chunk.text, new Set(result.terms));
      },
      score: Math.round(result.score * 1000) / 1000,
      source_url: chunk.sourceUrl,
      as_of: chunk.asOf,
      matchedTerms: matched.length,
      coverage: matched.length / words.length,
      distinctiveWeight: projectChosen || typedNames.some((term) => ownNames.get(chunk.projectId)?.has(term)) ? 1 : rarestMatchWeight,
      rarestMatchWeight,
      namesProject: typedNames.some((term) => nameTerms.get(chunk.projectId)?.has(term)),
      scorePerTerm: result.score / words.length / maxIdf,
    };
  };

  return {
    projectNames: projects.map((project) => project.name),
    resolveProject: (nameOrAlias) => projectIdByName.get(nameOrAlias.trim().toLowerCase()),
    candidates: (query, options) => rank(query, options).hits,
    search(query, options = {}) {
      const threshold = options.threshold ?? DEFAULT_THRESHOLD;
      if (outOfScope(query)) return [];
      const { hits: all, unknownWords } = rank(query, { projectId: options.projectId });
      // A name the corpus has never seen ("PancakeSwap", "Binance", or a known coin's name in
      // lower case: "marinade", "synthetix"), or any word no passage contains even with a typo
      // ("bitcoin", "robinhood"), is what the question is about; unless a project is named too
      // (or the caller chose one), its other words match by accident: "bridge ETH to bitcoin" is
      // not answered by a bridge between Ethereum networks.
      const guarded = !options.projectId && !all.some((hit) => hit.namesProject);
      if (guarded && (foreignNames(query, weights.vocabulary).length > 0 || outside.namedIn(query))) return [];
      const minWeight = guarded && unknownWords.length > 0 ? threshold.minDistinctiveWeightBesideUnknownWord : 0;
      // Answerability is decided once per query, by its strongest hit; the weaker passages that
      // follow are kept while they score close enough to the best, so a passage that matched
      // fewer of the words still appears after the one that matched them all.
      const best = all.find((hit) => isRelevant(hit, threshold) && hit.rarestMatchWeight >= minWeight);
      if (!best) return [];
      return all
        .filter((hit) => hit.score >= best.score * threshold.minRelativeScore)
        .slice(0, options.limit ?? 5)
        .map(toKnowledgeHit);
    },
  };
}

/** A hit as the tool returns it, without the figures used to judge it. */
function toKnowledgeHit(hit: ScoredHit): KnowledgeHit {
  const { project, title, section, snippet, score, source_url, as_of } = hit;
  return { project, title, section, snippet, score, source_url, as_of };
}

interface Ranking {
  hits: ScoredHit[];
  /** Query words no passage matched, neither as typed, by prefix or typo, nor by a synonym. */
  unknownWords: string[];
}

/**
 * A passage of a section the question asks for counts more. A Links passage that was not asked
 * for counts less: it is mostly the project's name and its domain ("pendle.finance"), so it
 * matches any question naming the project and answers none of them.
 */
function sectionBoost(intended: ReadonlySet<string>, section: string): number {
  if (intended.has(section)) return INTENT_BOOST;
  return section === LINKS ? 1 / INTENT_BOOST : 1;
}

const LINKS = 'Links';

/** Words that follow a project's name as part of how people call it: "Pendle Finance", "Chainlink Labs", "Starknet Foundation". */
const NAME_SUFFIXES: ReadonlySet<string> = new Set(queryTerms('finance protocol protocols labs network foundation dao app'));

/** Whether the query term `typed` can have produced the passage term `name` as a name, not by chance. */
function namedBy(typed: string, name: string): boolean {
  if (typed === name) return true;
  return typed.length >= 5 && (name.startsWith(typed) || editDistanceAtMost(typed, name, typed.length >= 8 ? 2 : 1));
}

/** Levenshtein distance between `a` and `b` is at most `max` (names are short: the plain table is enough). */
function editDistanceAtMost(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] <= max;
}

/** The passages of one project page, one per section (shared with the Orama comparison bench). */
export function sectionChunks(project: CorpusProject): Chunk[] {
  return project.sections.map((section, index) => ({
    id: `${project.id}#${index}`,
    projectId: project.id,
    project: project.name,
    aliases: [...project.aliases, project.token ?? ''].join(' '),
    category: project.category,
    section: section.heading,
    text: section.text,
    sourceUrl: sourceUrlFor(project, section.heading),
    asOf: project.as_of,
  }));
}

// The governance forum answers governance questions better than the home page.
function sourceUrlFor(project: CorpusProject, heading: string): string {
  const links = project.links as Record<string, string>;
  if (/governance/i.test(heading) && links.governance) return links.governance;
  return links.docs ?? links.website;
}
