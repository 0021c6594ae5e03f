/**
 * Quality and speed of knowledge_search on a labelled question set (bench/knowledge-eval.json).
 *
 *   npx tsx bench/knowledge-eval.ts            # figures for the shipped settings
 *   npx tsx bench/knowledge-eval.ts --sweep    # also the threshold grid used to calibrate them
 *
 * Prints recall@1 and recall@3 (expected project and section among the top results), the share
 * of unanswerable questions that return [], p50/p99 search latency, and the same quality
 * figures for a plain MiniSearch index (default options, no boosts, no threshold) as baseline.
 * Exits 1 when a target (recall@3 ≥ 0.9, unanswerable empty ≥ 0.9) is missed.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import MiniSearch from 'minisearch';
import { z } from 'zod';
import { loadCorpus } from '../tool-servers/knowledge/corpus.js';
import { createKnowledgeIndex, DEFAULT_THRESHOLD, type RelevanceThreshold } from '../tool-servers/knowledge/knowledge-index.js';
import { queryTerms } from '../tool-servers/knowledge/text-terms.js';

const evalSchema = z.object({
  answerable: z.array(z.object({ question: z.string().min(1), project: z.string().min(1), section: z.string().min(1) })).min(40),
  unanswerable: z.array(z.string().min(1)).min(10),
});
const data = evalSchema.parse(JSON.parse(readFileSync(new URL('./knowledge-eval.json', import.meta.url), 'utf8')));
const projects = loadCorpus(new URL('../config/knowledge', import.meta.url).pathname);

let started = performance.now();
const index = createKnowledgeIndex(projects);
const buildMs = performance.now() - started;

// Every expected label must exist, or recall would be silently capped.
for (const item of data.answerable) {
  const project = projects.find((p) => p.name === item.project);
  if (!project?.sections.some((s) => s.heading === item.section)) throw new Error(`label not in corpus: ${item.project} / ${item.section}`);
}

const sharesHeadingWord = (question: string, heading: string) => {
  const headingTerms = new Set(queryTerms(heading));
  return queryTerms(question).some((term) => headingTerms.has(term));
};
const noHeadingWord = data.answerable.filter((item) => !sharesHeadingWord(item.question, item.section)).length;

interface Quality {
  recallAt1: number;
  recallAt3: number;
  answerableEmpty: number;
  unanswerableEmpty: number;
  misses: string[];
}

type Searcher = (question: string) => { project: string; section: string }[];

function measure(search: Searcher): Quality {
  let at1 = 0;
  let at3 = 0;
  let answerableEmpty = 0;
  const misses: string[] = [];
  for (const item of data.answerable) {
    const hits = search(item.question).slice(0, 3);
    const rank = hits.findIndex((hit) => hit.project === item.project && hit.section === item.section);
    if (rank === 0) at1++;
    if (rank >= 0) at3++;
    if (hits.length === 0) answerableEmpty++;
    if (rank < 0) misses.push(`  miss: "${item.question}" → want ${item.project}/${item.section}, got ${hits.map((h) => `${h.project}/${h.section}`).join(', ') || '[]'}`);
  }
  let unanswerableEmpty = 0;
  for (const question of data.unanswerable) {
    const hits = search(question);
    if (hits.length === 0) unanswerableEmpty++;
    else misses.push(`  answered: "${question}" → ${hits[0].project}/${hits[0].section} (score ${'score' in hits[0] ? String(hits[0].score) : '?'})`);
  }
  const n = data.answerable.length;
  return { recallAt1: at1 / n, recallAt3: at3 / n, answerableEmpty, unanswerableEmpty: unanswerableEmpty / data.unanswerable.length, misses };
}

const tuned = (threshold: RelevanceThreshold): Searcher => (question) => index.search(question, { limit: 3, threshold });

// Baseline: the same sections in MiniSearch with its defaults — no boosts, stemming, stop words,
// prefix, typo tolerance or threshold.
const plain = new MiniSearch<{ id: string; project: string; section: string; text: string }>({ fields: ['project', 'section', 'text'], storeFields: ['project', 'section'] });
plain.addAll(projects.flatMap((p) => p.sections.map((s, i) => ({ id: `${p.id}#${i}`, project: p.name, section: s.heading, text: s.text }))));
const plainSearch: Searcher = (question) => plain.search(question).map((r) => ({ project: String(r.project), section: String(r.section) }));

const fmt = (x: number) => x.toFixed(3);
const shipped = measure(tuned(DEFAULT_THRESHOLD));
const baseline = measure(plainSearch);

// Latency: every question (answerable and not) many times, one timing per call.
const questions = [...data.answerable.map((item) => item.question), ...data.unanswerable];
for (const question of questions) index.search(question);
const samples: number[] = [];
started = performance.now();
while (performance.now() - started < 3000 && samples.length < 200_000) {
  for (const question of questions) {
    const t0 = performance.now();
    index.search(question, { limit: 5 });
    samples.push(performance.now() - t0);
  }
}
samples.sort((a, b) => a - b);
const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))];
const plainSamples: number[] = [];
for (let round = 0; round < 20; round++) {
  for (const question of questions) {
    const t0 = performance.now();
    plain.search(question);
    plainSamples.push(performance.now() - t0);
  }
}
plainSamples.sort((a, b) => a - b);
const plainP50 = plainSamples[Math.floor(plainSamples.length / 2)];

const sectionCount = projects.reduce((sum, p) => sum + p.sections.length, 0);
console.log(`corpus: ${projects.length} projects, ${sectionCount} sections; index built in ${buildMs.toFixed(1)} ms`);
console.log(`questions: ${data.answerable.length} answerable (${noHeadingWord} share no content word with their heading), ${data.unanswerable.length} unanswerable`);
console.log(`threshold: ${JSON.stringify(DEFAULT_THRESHOLD)}`);
console.log('');
console.log('                     recall@1  recall@3  unanswerable→[]  answerable→[]');
console.log(`knowledge_search     ${fmt(shipped.recallAt1)}     ${fmt(shipped.recallAt3)}     ${fmt(shipped.unanswerableEmpty)}            ${shipped.answerableEmpty}`);
console.log(`plain MiniSearch     ${fmt(baseline.recallAt1)}     ${fmt(baseline.recallAt3)}     ${fmt(baseline.unanswerableEmpty)}            ${baseline.answerableEmpty}`);
console.log('');
console.log(`latency (${samples.length} searches): p50 ${(pct(50) * 1000).toFixed(0)} µs, p99 ${(pct(99) * 1000).toFixed(0)} µs; plain MiniSearch p50 ${(plainP50 * 1000).toFixed(0)} µs (×${(pct(50) / plainP50).toFixed(1)})`);
if (shipped.misses.length > 0) console.log(`\nmisses of knowledge_search:\n${shipped.misses.join('\n')}`);

if (process.argv.includes('--sweep')) {
  console.log('\nthreshold sweep (recall@3 / unanswerable→[] / answerable→[]):');
  const perTerm = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2];
  for (const minTermsWithProjectName of [2, Infinity]) {
  console.log(`\nwith project name, min matched terms: ${minTermsWithProjectName}`);
  console.log(`coverage \\ score/term  ${perTerm.map((s) => String(s).padEnd(16)).join('')}`);
  for (const minCoverage of [0, 0.34, 0.5, 0.6, 0.67, 0.75]) {
    const row = perTerm.map((minScorePerTerm) => {
      const q = measure(tuned({ ...DEFAULT_THRESHOLD, minCoverage, minTermsWithProjectName, minScorePerTerm }));
      return `${q.recallAt3.toFixed(2)}/${q.unanswerableEmpty.toFixed(2)}/${q.answerableEmpty}`.padEnd(16);
    });
    console.log(`${String(minCoverage).padEnd(22)} ${row.join('')}`);
  }
  }
}

const met = shipped.recallAt3 >= 0.9 && shipped.unanswerableEmpty >= 0.9;
console.log(`\ntargets (recall@3 ≥ 0.9, unanswerable→[] ≥ 0.9): ${met ? 'met' : 'MISSED'}`);
if (!met) process.exitCode = 1;
