import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { Logger } from '../kit/index.js';

/** A corpus file larger than this is not a hand-written project page: skip it. */
const MAX_FILE_BYTES = 256 * 1024;

/** The YAML front matter every project file starts with. */
export const projectFrontMatterSchema = z.object({
  name: z.string().trim().min(1),
  aliases: z.array(z.string().trim().min(1)).default([]),
  // Token symbol; null for projects without a token (Base, Farcaster).
  token: z.string().trim().min(1).nullable().default(null),
  category: z.string().trim().min(1),
  links: z.object({ website: z.url() }).catchall(z.url()),
  // Where the facts were checked: one source or a list. Optional so an operator's own page loads without it.
  source: z
    .union([z.string().trim().min(1), z.array(z.string().trim().min(1)).min(1)])
    .transform((source) => (typeof source === 'string' ? [source] : source))
    .default([]),
  // YAML 1.2 reads an unquoted date as a string; a Date only appears with a custom schema.
  as_of: z.union([
    z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD'),
    z.date().transform((date) => date.toISOString().slice(0, 10)),
  ]),
});

export type ProjectFrontMatter = z.output<typeof projectFrontMatterSchema>;

/** One `##` section of a project file: the unit the search returns. */
export interface CorpusSection {
  heading: string;
  text: string;
}

export interface CorpusProject extends ProjectFrontMatter {
  /** File name without `.md`, e.g. `the-graph`. */
  id: string;
  file: string;
  sections: CorpusSection[];
}

/**
 * Read every `*.md` file of `dir` as a project page. A file that cannot be parsed (no front
 * matter, bad YAML, a front matter field missing, no `##` section, a name already taken) is
 * logged with its file name and skipped, so one bad file never hides the rest of the corpus.
 * A missing folder is logged and yields an empty corpus.
 *
 * @example
 * const projects = loadCorpus('config/knowledge', logger);
 * projects.find((p) => p.name === 'Uniswap')?.sections.map((s) => s.heading); // ['Overview', …]
 */
export function loadCorpus(dir: string, logger?: Logger): CorpusProject[] {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((file) => extname(file).toLowerCase() === '.md')
      .sort();
  } catch (err) {
    logger?.error({ dir, err: (err as Error).message }, 'knowledge folder cannot be read; the corpus is empty');
    return [];
  }
  const projects: CorpusProject[] = [];
  const takenNames = new Map<string, string>();
  for (const file of files) {
    const path = join(dir, file);
    try {
      const size = statSync(path).size;
      if (size > MAX_FILE_BYTES) throw new Error(`file is ${size} bytes, over the ${MAX_FILE_BYTES}-byte limit`);
      const project = parseProjectFile(readFileSync(path, 'utf8'), file);
      const key = project.name.toLowerCase();
      const owner = takenNames.get(key);
      if (owner) throw new Error(`project name "${project.name}" is already defined in ${owner}`);
      takenNames.set(key, file);
      projects.push(project);
    } catch (err) {
      logger?.warn({ file, reason: (err as Error).message }, `skipping malformed knowledge file ${file}`);
    }
  }
  logger?.info({ dir, projects: projects.length }, 'knowledge corpus loaded');
  return projects;
}

/**
 * Parse one project page: `---` YAML front matter `---`, then Markdown whose `##` headings
 * start sections. The `#` title line and text before the first `##` are not indexed.
 * Throws an Error saying what is wrong.
 *
 * @example
 * parseProjectFile('---\nname: X\ncategory: dex\nlinks: {website: https://x.example}\nas_of: 2025-01-01\n---\n## Overview\nX swaps.', 'x.md');
 */
export function parseProjectFile(source: string, file: string): CorpusProject {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$/.exec(source);
  if (!match) throw new Error('no YAML front matter (the file must start with a --- block)');
  let raw: unknown;
  try {
    raw = parseYaml(match[1]);
  } catch (err) {
    throw new Error(`front matter is not valid YAML: ${(err as Error).message.split('\n')[0].replace(/:\s*$/, '')}`);
  }
  const parsed = projectFrontMatterSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`front matter ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  }
  const sections = splitSections(match[2]);
  if (sections.length === 0) throw new Error('no "## " sections with text');
  return { ...parsed.data, id: basename(file, extname(file)), file, sections };
}

function splitSections(markdown: string): CorpusSection[] {
  const sections: CorpusSection[] = [];
  let current: { heading: string; lines: string[] } | undefined;
  const flush = () => {
    const text = current?.lines.join('\n').trim();
    if (current && text) sections.push({ heading: current.heading, text });
  };
  for (const line of markdown.split(/\r?\n/)) {
    const heading = /^##\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      current = { heading: heading[1], lines: [] };
    } else if (current) {
      current.lines.push(line);
    }
  }
  flush();
  return sections;
}
