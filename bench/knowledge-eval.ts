/**
 * Quality and speed of knowledge_search on labelled questions (bench/knowledge-eval.json), and
 * the same corpus in Orama for comparison (bench/knowledge-eval.orama.ts).
 *
 *   npx tsx bench/knowledge-eval.ts                # figures for the shipped settings
 *   npx tsx bench/knowledge-eval.ts --sweep        # also the threshold grid, on the tuning sets only
 *   npx tsx bench/knowledge-eval.ts --tuning-only  # while tuning: the honest set is neither run nor shown
 *
 * The questions come in six sets: four in bench/knowledge-eval.json, then heldout_v4 and the
 * honest one, heldout_v5, each in its own file so its commit shows it predates the tuning it
 * judges. `calibration` is what the threshold was first tuned on (and grew questions about the
 * projects added for issue 23). `heldout`, `heldout_v2`, `heldout_v3` and `heldout_v4` were
 * each written to measure one version honestly, run once; their misses were then studied and the
 * search changed, so they are tuning sets now too. `heldout_v5` was written from the project list
 * and section names alone, by a writer who had read no page, and committed before the tuning that
 * followed heldout_v4's run: its figures are the honest estimate, and only they decide the exit code. For each set it prints recall@1 and recall@3 (expected project
 * and section among the top results) and the share of unanswerable questions that return [], for
 * knowledge_search, plain MiniSearch (defaults, no threshold) and Orama (the same chunks,
 * tokenizer and boosts; without a threshold, with knowledge_search's threshold — coverage,
 * distinctive word, score bar recalibrated for Orama's scale on the tuning sets — but without its
 * query synonyms, section intents and foreign-name rule, and with Orama's own all-terms
 * threshold). Then index build time and p50/p99 search latency for both engines.
 * Exits 1 when a target of issue 23 (recall@3 ≥ 0.93, recall@1 ≥ 0.80, unanswerable empty ≥ 0.93,
 * knowledge_search p50 ≤ 2 ms) is missed on heldout_v5.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import MiniSearch from 'minisearch';
import { z } from 'zod';
import { loadCorpus } from '../tool-servers/knowledge/corpus.js';
import { createKnowledgeIndex, DEFAULT_THRESHOLD, type RelevanceThreshold } from '../tool-servers/knowledge/knowledge-index.js';
import { queryTerms } from '../tool-servers/knowledge/text-terms.js';
import { createOramaKnowledgeIndex } from './knowledge-eval.orama.js';

const questionSet = (minAnswerable: number, minUnanswerable: number) =>
  z.object({
    answerable: z
      .array(z.object({ question: z.string().min(1), project: z.string().min(1), section: z.string().min(1) }))
      .min(minAnswerable),
    unanswerable: z.array(z.string().min(1)).min(minUnanswerable),
  });
const evalSchema = z.object({
  calibration: questionSet(40, 10),
  heldout: questionSet(15, 4),
  heldout_v2: questionSet(30, 10),
  heldout_v3: questionSet(80, 30),
});
type QuestionSet = z.infer<ReturnType<typeof questionSet>>;

const readJson = (name: string): unknown => JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8'));
const data = evalSchema.parse(readJson('./knowledge-eval.json'));
const tuningOnly = process.argv.includes('--tuning-only');
const heldoutV4 = questionSet(80, 30).parse(readJson('./knowledge-heldout-v4.json'));
const tuningSets = [data.calibration, data.heldout, data.heldout_v2, data.heldout_v3, heldoutV4];
const honestSet = questionSet(80, 30).parse(readJson('./knowledge-heldout-v5.json'));
const sets: Array<[string, QuestionSet]> = [
  ['calibration (tuned on)', data.calibration],
  ['first held-out (seen, tuned on since)', data.heldout],
  ['heldout_v2 (issue 23 named its misses; tuned on since)', data.heldout_v2],
  ['heldout_v3 (run once for issue 23; tuned on since)', data.heldout_v3],
  ['heldout_v4 (run once; tuned on since)', heldoutV4],
  ...(tuningOnly ? [] : [['heldout_v5 (never tuned on)', honestSet] as [string, QuestionSet]]),
];
const TARGETS = { recallAt3: 0.93, recallAt1: 0.8, unanswerableEmpty: 0.93, p50Ms: 2 };
const projects = loadCorpus(new URL('../config/knowledge', import.meta.url).pathname);

// Every expected label must exist, or recall would be silently capped.
for (const set of [...tuningSets, honestSet]) {
  for (const item of set.answerable) {
    const project = projects.find((p) => p.name === item.project);
    if (!project?.sections.some((s) => s.heading === item.section))
      throw new Error(`label not in corpus: ${item.project} / ${item.section}`);
  }
}

/** Median build time over `rounds` builds, so one GC pause does not decide it. */
function buildTime<T>(build: () => T, rounds = 15): { index: T; ms: number } {
  const times: number[] = [];
  let index = build();
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    index = build();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { index, ms: times[Math.floor(times.length / 2)] };
}

const ORAMA_TOLERANCE = 1;
const mini = buildTime(() => createKnowledgeIndex(projects));
const orama = buildTime(() => createOramaKnowledgeIndex(projects, ORAMA_TOLERANCE));
const index = mini.index;

const sharesHeadingWord = (question: string, heading: string) => {
  const headingTerms = new Set(queryTerms(heading));
  return queryTerms(question).some((term) => headingTerms.has(term));
};

interface Quality {
  recallAt1: number;
  recallAt3: number;
  answerableEmpty: number;
  unanswerableEmpty: number;
  misses: string[];
}

type Searcher = (question: string) => { project: string; section: string; score?: number }[];

function measure(search: Searcher, set: QuestionSet): Quality {
  let at1 = 0;
  let at3 = 0;
  let answerableEmpty = 0;
  const misses: string[] = [];
  for (const item of set.answerable) {
    const hits = search(item.question).slice(0, 3);
    const rank = hits.findIndex((hit) => hit.project === item.project && hit.section === item.section);
    if (rank === 0) at1++;
    if (rank >= 0) at3++;
    if (hits.length === 0) answerableEmpty++;
    if (rank < 0)
      misses.push(
        `  miss: "${item.question}" → want ${item.project}/${item.section}, got ${hits.map((h) => `${h.project}/${h.section}`).join(', ') || '[]'}`,
      );
  }
  let unanswerableEmpty = 0;
  for (const question of set.unanswerable) {
    const hits = search(question);
    if (hits.length === 0) unanswerableEmpty++;
    else misses.push(`  answered: "${question}" → ${hits[0].project}/${hits[0].section} (score ${hits[0].score ?? '?'})`);
  }
  const n = set.answerable.length;
  return {
    recallAt1: at1 / n,
    recallAt3: at3 / n,
    answerableEmpty,
    unanswerableEmpty: unanswerableEmpty / set.unanswerable.length,
    misses,
  };
}

const tuned =
  (threshold: RelevanceThreshold): Searcher =>
  (question) =>
    index.search(question, { limit: 3, threshold });

// Baseline: the same sections in MiniSearch with its defaults — no boosts, stemming, stop words,
// prefix, typo tolerance or threshold.
const plain = new MiniSearch<{ id: string; project: string; section: string; text: string }>({
  fields: ['project', 'section', 'text'],
  storeFields: ['project', 'section'],
});
plain.addAll(
  projects.flatMap((p) => p.sections.map((s, i) => ({ id: `${p.id}#${i}`, project: p.name, section: s.heading, text: s.text }))),
);
const plainSearch: Searcher = (question) => plain.search(question).map((r) => ({ project: String(r.project), section: String(r.section) }));

// Orama scores with length-normalised term frequency, so its scores run several times lower
// than MiniSearch's and the score bar must be found again for it. Found the same way and on the
// same questions as the shipped one: the highest bar on the tuning sets that keeps the best
// recall@3 among bars leaving ≥ 0.9 of their unanswerable questions empty.
const tuning: QuestionSet = {
  answerable: tuningSets.flatMap((set) => set.answerable),
  unanswerable: tuningSets.flatMap((set) => set.unanswerable),
};
function calibrateOramaScoreBar(): RelevanceThreshold {
  let best = { threshold: DEFAULT_THRESHOLD, recallAt3: -1 };
  for (const minScorePerTerm of [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9]) {
    const threshold = { ...DEFAULT_THRESHOLD, minScorePerTerm };
    const q = measure((question) => orama.index.search(question, 3, threshold), tuning);
    if (q.unanswerableEmpty >= 0.9 && q.recallAt3 >= best.recallAt3) best = { threshold, recallAt3: q.recallAt3 };
  }
  return best.threshold;
}
const oramaThreshold = calibrateOramaScoreBar();

const engines: Array<[string, Searcher]> = [
  ['knowledge_search (MiniSearch)', tuned(DEFAULT_THRESHOLD)],
  ['plain MiniSearch, no threshold', plainSearch],
  [`Orama, no threshold (tolerance ${ORAMA_TOLERANCE})`, (question) => orama.index.searchAnyTerm(question, 3)],
  [`Orama, same threshold, bar ${oramaThreshold.minScorePerTerm}`, (question) => orama.index.search(question, 3, oramaThreshold)],
  ['Orama, own threshold 0 (all terms)', (question) => orama.index.searchAllTerms(question, 3)],
];

const fmt = (x: number) => x.toFixed(3);
const sectionCount = projects.reduce((sum, p) => sum + p.sections.length, 0);
console.log(`corpus: ${projects.length} projects, ${sectionCount} sections`);
console.log(`threshold: ${JSON.stringify(DEFAULT_THRESHOLD)}`);
let qualityMet = false;
const shippedMisses: string[] = [];
for (const [name, set] of sets) {
  const noHeadingWord = set.answerable.filter((item) => !sharesHeadingWord(item.question, item.section)).length;
  console.log(
    `\n${name}: ${set.answerable.length} answerable (${noHeadingWord} share no content word with their heading), ${set.unanswerable.length} unanswerable`,
  );
  console.log('                                        recall@1  recall@3  unanswerable→[]  answerable→[]');
  engines.forEach(([engine, search], i) => {
    const q = measure(search, set);
    console.log(
      `${engine.padEnd(40)}${fmt(q.recallAt1)}     ${fmt(q.recallAt3)}     ${fmt(q.unanswerableEmpty)}            ${q.answerableEmpty}`,
    );
    if (i === 0) {
      if (set === honestSet) {
        const recallMet = q.recallAt3 >= TARGETS.recallAt3 && q.recallAt1 >= TARGETS.recallAt1;
        qualityMet = recallMet && q.unanswerableEmpty >= TARGETS.unanswerableEmpty;
      }
      if (q.misses.length > 0) shippedMisses.push(`${name}:`, ...q.misses);
    }
  });
}

// Latency: every question of both sets, round after round for `budgetMs`, one timing per call.
const questions = sets.flatMap(([, set]) => [...set.answerable.map((item) => item.question), ...set.unanswerable]);
function latency(search: (question: string) => unknown, budgetMs: number): { p50: number; p99: number; n: number } {
  for (const question of questions) search(question);
  const samples: number[] = [];
  const started = performance.now();
  while (performance.now() - started < budgetMs && samples.length < 200_000) {
    for (const question of questions) {
      const t0 = performance.now();
      search(question);
      samples.push(performance.now() - t0);
    }
  }
  samples.sort((a, b) => a - b);
  const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))];
  return { p50: pct(50), p99: pct(99), n: samples.length };
}
const timed: Array<[string, number, (question: string) => unknown]> = [
  ['knowledge_search (MiniSearch)', mini.ms, (question) => index.search(question, { limit: 5 })],
  [`Orama, same threshold`, orama.ms, (question) => orama.index.search(question, 5, oramaThreshold)],
  ['Orama engine only (all terms)', orama.ms, (question) => orama.index.searchAllTerms(question, 5)],
  ['plain MiniSearch engine only', Number.NaN, (question) => plain.search(question)],
];
console.log('\n                                        build ms   p50 µs   p99 µs   searches');
let p50Ms = Number.NaN;
for (const [name, buildMs, search] of timed) {
  const t = latency(search, 2000);
  if (Number.isNaN(p50Ms)) p50Ms = t.p50;
  const build = Number.isNaN(buildMs) ? '-' : buildMs.toFixed(1);
  console.log(
    `${name.padEnd(40)}${build.padStart(8)}  ${(t.p50 * 1000).toFixed(0).padStart(7)}  ${(t.p99 * 1000).toFixed(0).padStart(7)}   ${t.n}`,
  );
}
if (shippedMisses.length > 0) console.log(`\nmisses of knowledge_search:\n${shippedMisses.join('\n')}`);

if (process.argv.includes('--sweep')) {
  // Tuning sets only: tuning on heldout_v5 would make its figures meaningless.
  console.log('\nthreshold sweep on the tuning sets (recall@3 / unanswerable→[] / answerable→[]):');
  const perTerm = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2];
  for (const minDistinctiveWeight of [0, 0.5, 0.6, 0.65, 0.7]) {
    console.log(`\nmin distinctive weight of a partial match: ${minDistinctiveWeight}`);
    console.log(`coverage \\ score/term  ${perTerm.map((s) => String(s).padEnd(16)).join('')}`);
    for (const minCoverage of [0, 0.34, 0.5, 0.6, 0.67, 0.75]) {
      const row = perTerm.map((minScorePerTerm) => {
        const q = measure(tuned({ ...DEFAULT_THRESHOLD, minCoverage, minDistinctiveWeight, minScorePerTerm }), tuning);
        return `${q.recallAt3.toFixed(2)}/${q.unanswerableEmpty.toFixed(2)}/${q.answerableEmpty}`.padEnd(16);
      });
      console.log(`${String(minCoverage).padEnd(22)} ${row.join('')}`);
    }
  }
}

if (tuningOnly) {
  console.log('\nheldout_v5 not run (--tuning-only): no target judged');
} else {
  const met = qualityMet && p50Ms <= TARGETS.p50Ms;
  console.log(
    `\ntargets for knowledge_search on heldout_v5 (recall@3 ≥ ${TARGETS.recallAt3}, recall@1 ≥ ${TARGETS.recallAt1}, ` +
      `unanswerable→[] ≥ ${TARGETS.unanswerableEmpty}, p50 ≤ ${TARGETS.p50Ms} ms): ${met ? 'met' : 'MISSED'}`,
  );
  if (!met) process.exitCode = 1;
}
