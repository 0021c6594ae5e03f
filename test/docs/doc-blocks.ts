/**
 * The code blocks of README.md and docs/, with what each says about itself: the HTML comment on
 * the line before a fence (invisible on GitHub) marks it as a doc test (docs/ARCHITECTURE.md,
 * "Doc tests"):
 *
 *   <!-- doc-test: run id=first-request after=… -->  run it against a gateway the suite starts
 *   <!-- doc-test: config [at=mcpServers] -->         a gateway config, or a fragment of one (`at`: the section it goes in): parseConfig must take it
 *   <!-- doc-test: elsewhere test/…/x.test.ts -->     run by that test, which names this page
 *   <!-- doc-test: skip: why it cannot run here -->   deliberately not run, and why
 *
 * Every block but a `text` one (layouts, diagrams) carries one, so a new snippet cannot slip in untested
 * without saying why.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

export type Marker =
  | { kind: 'run'; id: string; after?: string }
  | { kind: 'config'; at?: string }
  | { kind: 'elsewhere'; test: string }
  | { kind: 'skip'; reason: string };

export interface DocBlock {
  /** The page, relative to the repository root. */
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  lang: string;
  code: string;
  /** Undefined: no marker (a problem, unless the block is `text`). */
  marker?: Marker;
}

const MARKER = /^<!--\s*doc-test:\s*(.*?)\s*-->\s*$/;
const LANGS_WITHOUT_MARKER = new Set(['text']);
const RUNNABLE_LANGS = new Set(['sh', 'ts']);

/** Every fenced block of one Markdown text, with the marker on the line before it. */
export function blocksOf(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(```|~~~)(\S*)/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((text, j) => j > i && text.startsWith(open[1]) && text.slice(open[1].length).trim() === '');
    const close = end === -1 ? lines.length : end;
    const previous = i > 0 ? MARKER.exec(lines[i - 1]) : null;
    blocks.push({
      file,
      line: i + 1,
      lang: open[2],
      code: lines.slice(i + 1, close).join('\n') + '\n',
      marker: previous ? parseMarker(previous[1]) : undefined,
    });
    i = close;
  }
  return blocks;
}

/** `run id=x after=y`, `config [at=section]`, `elsewhere <path>`, `skip: <reason>`; anything else throws. */
export function parseMarker(text: string): Marker {
  const [kind, ...rest] = text.split(/\s+/);
  if (kind === 'run') {
    const options = Object.fromEntries(rest.map((word) => word.split('=', 2) as [string, string]));
    const unknown = Object.keys(options).filter((key) => key !== 'id' && key !== 'after');
    if (!options.id || unknown.length) throw new Error(`a run marker needs id=… (and may have after=…), got "${text}"`);
    return { kind: 'run', id: options.id, ...(options.after ? { after: options.after } : {}) };
  }
  if (kind === 'config' && rest.length === 0) return { kind: 'config' };
  if (kind === 'config' && rest.length === 1 && /^at=\w+$/.test(rest[0])) return { kind: 'config', at: rest[0].slice(3) };
  if (kind === 'elsewhere' && rest.length === 1) return { kind: 'elsewhere', test: rest[0] };
  const skip = /^skip:\s*(.{10,})$/.exec(text);
  if (skip) return { kind: 'skip', reason: skip[1] };
  throw new Error(
    `not a doc-test marker: "${text}" (run id=…, config [at=…], elsewhere <test>, or skip: <a reason of 10 characters or more>)`,
  );
}

/** The pages: README.md and every Markdown file under docs/. */
export function docPages(root = ROOT): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return [join(root, 'README.md'), ...walk(join(root, 'docs'))].map((path) => relative(root, path));
}

/** Every block of every page; a marker that does not parse throws, naming the page and line. */
export function allBlocks(root = ROOT): DocBlock[] {
  return docPages(root).flatMap((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    try {
      return blocksOf(text, file);
    } catch (err) {
      throw new Error(`${file}: ${(err as Error).message}`);
    }
  });
}

/**
 * What is wrong with the markers, as `file:line: problem`: a block without one, a run marker on
 * a language the runner does not run, two runs of one id, an `after` naming no run, an
 * `elsewhere` test that does not exist or does not read this page.
 */
export function markerProblems(blocks: DocBlock[], root = ROOT): string[] {
  const problems: string[] = [];
  const runs = new Map<string, DocBlock>();
  for (const block of blocks) {
    const where = `${block.file}:${block.line}`;
    const marker = block.marker;
    if (!marker) {
      if (!LANGS_WITHOUT_MARKER.has(block.lang)) problems.push(`${where}: a ${block.lang} block without a doc-test marker`);
      continue;
    }
    if (marker.kind === 'run') {
      if (!RUNNABLE_LANGS.has(block.lang)) problems.push(`${where}: only sh and ts blocks run, not ${block.lang}`);
      if (runs.has(marker.id)) problems.push(`${where}: the id "${marker.id}" is used twice`);
      runs.set(marker.id, block);
    }
    if (marker.kind === 'config' && block.lang !== 'json') problems.push(`${where}: a config block must be json`);
    if (marker.kind === 'elsewhere') {
      const test = join(root, marker.test);
      if (!existsSync(test)) problems.push(`${where}: ${marker.test} does not exist`);
      else if (!readFileSync(test, 'utf8').includes(block.file)) problems.push(`${where}: ${marker.test} does not read ${block.file}`);
    }
  }
  for (const block of runs.values()) {
    const after = (block.marker as { after?: string }).after;
    if (after && !runs.has(after)) problems.push(`${block.file}:${block.line}: after=${after} names no runnable block`);
  }
  return problems;
}

/** The runnable block of `id`, with the blocks it comes after (their code first), as one program. */
export function programOf(blocks: DocBlock[], id: string): { block: DocBlock; code: string } {
  const byId = new Map(blocks.flatMap((b) => (b.marker?.kind === 'run' ? [[b.marker.id, b] as const] : [])));
  const block = byId.get(id);
  if (!block) throw new Error(`no runnable block has id=${id}`);
  const chain: DocBlock[] = [];
  for (let current: DocBlock | undefined = block; current;) {
    if (chain.includes(current)) throw new Error(`after= loops through id=${id}`);
    chain.unshift(current);
    const after: string | undefined = (current.marker as { after?: string }).after;
    current = after ? byId.get(after) : undefined;
  }
  return { block, code: chain.map((b) => b.code).join('\n') };
}
