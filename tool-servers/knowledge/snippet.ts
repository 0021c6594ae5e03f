import { normalizeTerm, tokenize } from './text-terms.js';

/** Longest snippet returned, in characters (an ellipsis is added when cut). */
export const MAX_SNIPPET_CHARS = 320;
// A best sentence shorter than this is joined by the next one, so the snippet stands alone.
const SHORT_SENTENCE_CHARS = 120;

/**
 * The sentence(s) of `text` that contain the most of `matchedTerms` (search terms as produced
 * by normalizeTerm), earlier sentences winning ties, cut to `maxChars` at a word boundary.
 *
 * @example
 * bestSnippet('Uniswap is a DEX. UNI is the governance token.', new Set(['governanc'])) // 'UNI is the governance token.'
 */
export function bestSnippet(text: string, matchedTerms: ReadonlySet<string>, maxChars = MAX_SNIPPET_CHARS): string {
  const sentences = splitSentences(text);
  if (sentences.length === 0) return '';
  let best = 0;
  let bestHits = -1;
  sentences.forEach((sentence, index) => {
    const hits = new Set(
      tokenize(sentence)
        .map(normalizeTerm)
        .filter((term): term is string => term !== null && matchedTerms.has(term)),
    ).size;
    if (hits > bestHits) {
      best = index;
      bestHits = hits;
    }
  });
  let snippet = sentences[best];
  if (snippet.length < SHORT_SENTENCE_CHARS && best + 1 < sentences.length) snippet = `${snippet} ${sentences[best + 1]}`;
  return cut(snippet, maxChars);
}

function splitSentences(text: string): string[] {
  return (
    text
      .split(/\n+/)
      .map((line) => line.replace(/^\s*[-*]\s+/, '').trim())
      .filter((line) => line.length > 0)
      // A sentence ends at . ! or ? followed by a space and a capital or digit ("e.g. the" stays whole).
      .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[A-Z0-9])/))
  );
}

function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const slice = text.slice(0, maxChars - 1);
  const lastSpace = slice.lastIndexOf(' ');
  return `${(lastSpace > maxChars / 2 ? slice.slice(0, lastSpace) : slice).replace(/[\s,;:]+$/, '')}…`;
}
