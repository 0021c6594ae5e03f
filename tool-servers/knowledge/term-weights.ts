/**
 * How much each term says about which passage answers: its BM25 inverse document frequency over
 * the passages, as a share of the largest possible one. "token" (in a third of the passages)
 * weighs about 0.3, "flash" (in one) 1. A term no passage contains weighs 1 too: it is the most
 * specific word of the question, and a passage that lacks it answers something else.
 */
export interface TermWeights {
  /** Every term of every passage. */
  readonly vocabulary: ReadonlySet<string>;
  /** idf(term) / largest idf, in (0, 1]. */
  weight(term: string): number;
}

/**
 * Term weights over passages given as their sets of terms.
 *
 * @example
 * const weights = createTermWeights([new Set(['flash', 'loan']), new Set(['loan'])]);
 * weights.weight('flash') > weights.weight('loan') // true
 */
export function createTermWeights(passages: Iterable<ReadonlySet<string>>): TermWeights {
  const passagesWith = new Map<string, number>();
  let count = 0;
  for (const terms of passages) {
    count++;
    for (const term of terms) passagesWith.set(term, (passagesWith.get(term) ?? 0) + 1);
  }
  const maxIdf = largestIdf(count);
  return {
    vocabulary: new Set(passagesWith.keys()),
    weight(term) {
      const n = passagesWith.get(term);
      return n === undefined ? 1 : bm25Idf(count, n) / maxIdf;
    },
  };
}

/**
 * BM25's largest inverse document frequency (a term found in one of `chunkCount` chunks).
 * Scores divided by it keep the threshold meaningful whether the folder holds 3 projects or 300.
 */
export function largestIdf(chunkCount: number): number {
  return bm25Idf(Math.max(chunkCount, 1), 1);
}

function bm25Idf(count: number, containing: number): number {
  return Math.log(1 + (count - containing + 0.5) / (containing + 0.5));
}
