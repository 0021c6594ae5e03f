/**
 * The knowledge corpus in Orama, for bench/knowledge-eval.ts to compare with the MiniSearch index
 * knowledge_search ships. Both engines get the same chunks (one per section, name, aliases and
 * token symbol copied into each), the same tokenizer, stop words and stemmer, and the same field
 * boosts, so the figures compare the engines rather than the text handling. What Orama cannot
 * match: its typo tolerance is one edit distance for every word (MiniSearch's grows with word
 * length), and prefix and fuzzy matches score as much as exact ones.
 */
import { create, insertMultiple, search, type Results, type TypedDocument } from '@orama/orama';
import type { CorpusProject } from '../tool-servers/knowledge/corpus.js';
import {
  FIELD_BOOSTS,
  isRelevant,
  sectionChunks,
  type RelevanceThreshold,
  type ScoredHit,
} from '../tool-servers/knowledge/knowledge-index.js';
import { createTermWeights, largestIdf } from '../tool-servers/knowledge/term-weights.js';
import { distinctiveNameTerms, ownNameTerms } from '../tool-servers/knowledge/project-name-terms.js';
import { bestSnippet } from '../tool-servers/knowledge/snippet.js';
import { normalizeTerm, queryTerms, tokenize } from '../tool-servers/knowledge/text-terms.js';

const schema = {
  projectId: 'string',
  project: 'string',
  aliases: 'string',
  category: 'string',
  section: 'string',
  text: 'string',
} as const;
const SEARCHED = ['project', 'aliases', 'category', 'section', 'text'] as const;

export interface OramaHit {
  project: string;
  section: string;
  score: number;
  snippet?: string;
}

export interface OramaKnowledgeIndex {
  /** knowledge_search's threshold (without its query synonyms, section intents and foreign-name rule) applied to Orama's hits: [] when nothing answers. */
  search(query: string, limit: number, threshold: RelevanceThreshold): OramaHit[];
  /** Orama's own cut-off instead: `threshold: 0` keeps only chunks matching every query term. */
  searchAllTerms(query: string, limit: number): OramaHit[];
  /** Orama's ranking alone: every chunk matching any query term. */
  searchAnyTerm(query: string, limit: number): OramaHit[];
}

/** Levenshtein distance, giving up (returning max + 1) once it must exceed `max`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      rowMin = Math.min(rowMin, current[j]);
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length];
}

/**
 * Index the sections of `projects` in Orama (BM25, default k/b/d) with typo tolerance `tolerance`.
 *
 * @example
 *   createOramaKnowledgeIndex(loadCorpus('config/knowledge'), 1).search('who can liquidate my Aave loan', 3, DEFAULT_THRESHOLD)
 */
export function createOramaKnowledgeIndex(projects: CorpusProject[], tolerance: number): OramaKnowledgeIndex {
  // Orama stores the unindexed sourceUrl too; only the schema's fields are searched.
  const documents = projects.flatMap(sectionChunks);
  const db = create({
    schema,
    components: {
      tokenizer: {
        language: 'english',
        normalizationCache: new Map(),
        // Documents are indexed per property; a query (no property) arrives already normalised.
        tokenize: (raw: string, _language?: string, prop?: string) =>
          prop === undefined ? raw.split(' ').filter(Boolean) : tokenize(raw).flatMap((word) => normalizeTerm(word) ?? []),
      },
    },
  });
  insertMultiple(db, documents);

  // What the answerability rule needs and Orama does not report: which query terms a hit matched.
  const termsOf = new Map(documents.map((doc) => [doc.id, new Set(queryTerms(SEARCHED.map((field) => doc[field]).join(' ')))]));
  const nameTerms = distinctiveNameTerms(projects);
  const weights = createTermWeights(termsOf.values());
  const ownNames = ownNameTerms(projects);
  const maxIdf = largestIdf(documents.length);

  const run = (terms: string[], threshold: 0 | 1): Results<TypedDocument<typeof db>> => {
    const results = search(db, {
      term: terms.join(' '),
      properties: [...SEARCHED],
      boost: FIELD_BOOSTS,
      tolerance,
      threshold,
      limit: documents.length,
    });
    // The default components are synchronous; a promise here would mean a different setup.
    if (results instanceof Promise) throw new Error('Orama search returned a promise');
    return results;
  };

  type Hit = Results<TypedDocument<typeof db>>['hits'][number];

  // Computed only for the hits the rule looks at: Orama reports scores, not which terms matched.
  const matchedWords = (hit: Hit, terms: string[]): { matched: string[]; words: Set<string> } => {
    const docTerms = termsOf.get(hit.id) ?? new Set<string>();
    const words = new Set<string>();
    const matched: string[] = [];
    for (const term of terms) {
      let found = false;
      for (const word of docTerms) {
        if (word.startsWith(term) || editDistance(term, word, tolerance) <= tolerance) {
          words.add(word);
          found = true;
        }
      }
      if (found) matched.push(term);
    }
    return { matched, words };
  };

  const toScoredHit = (hit: Hit, terms: string[]): ScoredHit => {
    const { matched, words } = matchedWords(hit, terms);
    const doc = hit.document;
    const rarestMatchWeight = Math.max(0, ...matched.map((term) => weights.weight(term)));
    return {
      project: doc.project,
      projectId: doc.projectId,
      title: `${doc.project} — ${doc.section}`,
      section: doc.section,
      snippet: '',
      score: hit.score,
      source_url: '',
      as_of: '',
      matchedTerms: matched.length,
      coverage: matched.length / terms.length,
      distinctiveWeight: [...words].some((word) => ownNames.get(doc.projectId)?.has(word)) ? 1 : rarestMatchWeight,
      rarestMatchWeight,
      namesProject: [...words].some((word) => nameTerms.get(doc.projectId)?.has(word)),
      scorePerTerm: hit.score / terms.length / maxIdf,
    };
  };

  const plainHits = (query: string, threshold: 0 | 1, limit: number): OramaHit[] => {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    return run(terms, threshold)
      .hits.slice(0, limit)
      .map((hit) => ({ project: hit.document.project, section: hit.document.section, score: hit.score }));
  };

  return {
    search(query, limit, threshold) {
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      // Same shape as knowledge_search: the first relevant hit decides answerability, then every
      // hit scoring at least minRelativeScore of it is kept.
      const hits = run(terms, 1).hits;
      const best = hits.find((hit) => isRelevant(toScoredHit(hit, terms), threshold));
      if (!best) return [];
      // knowledge_search returns a snippet with every hit; so does this, to time the same work.
      return hits
        .filter((hit) => hit.score >= best.score * threshold.minRelativeScore)
        .slice(0, limit)
        .map((hit) => ({
          project: hit.document.project,
          section: hit.document.section,
          score: hit.score,
          snippet: bestSnippet(hit.document.text, matchedWords(hit, terms).words),
        }));
    },
    searchAllTerms: (query, limit) => plainHits(query, 0, limit),
    searchAnyTerm: (query, limit) => plainHits(query, 1, limit),
  };
}
