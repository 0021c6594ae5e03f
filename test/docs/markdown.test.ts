/**
 * README.md and docs/ hold together: every relative link points at a file that exists, and a link
 * with a `#fragment` at a heading of that page (GitHub's anchors), so moving a section or renaming
 * a page cannot leave a dead link behind (links inside code are not links); every code block is
 * closed and names its language, so a block cannot swallow the prose after it and a reader (or a
 * doc test) knows what it holds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`+[^`\n]*`+/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Each relative link of `files` that leads nowhere, as `file: target (why)`; and how many links were checked. */
function brokenLinks(files: string[], root: string): { broken: string[]; checked: number } {
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    const text = prose(readFileSync(file, 'utf8'));
    const targets = [
      ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]),
      ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((match) => match[1]),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      checked++;
      const [path, fragment] = target.split('#', 2) as [string, string | undefined];
      const destination = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(root, file)}: ${target}`;
      if (!existsSync(destination)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (fragment === undefined) continue;
      if (statSync(destination).isDirectory() || !destination.endsWith('.md')) {
        broken.push(`${where} (an anchor in a file that is not Markdown)`);
      } else if (!anchors(readFileSync(destination, 'utf8')).has(fragment)) {
        broken.push(`${where} (no heading with that anchor)`);
      }
    }
  }
  return { broken, checked };
}

/** Each fence of `markdown` that opens a block without naming its language, or is never closed, as `line N: …`. */
function badFences(markdown: string): string[] {
  const bad: string[] = [];
  let open: { line: number; fence: string } | undefined;
  markdown.split('\n').forEach((text, index) => {
    const fence = /^(```|~~~)(.*)$/.exec(text);
    if (!fence) return;
    if (open === undefined) {
      open = { line: index + 1, fence: fence[1] };
      if (fence[2].trim() === '') bad.push(`line ${index + 1}: a code block without its language`);
    } else if (fence[1] === open.fence && fence[2].trim() === '') open = undefined;
  });
  if (open !== undefined) bad.push(`line ${open.line}: a code block never closed`);
  return bad;
}

const PAGES = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

test('every relative link in README.md and docs/ leads to a file that exists, and to a heading of it', () => {
  const { broken, checked } = brokenLinks(PAGES, ROOT);
  assert.ok(checked > 50, `only ${checked} relative links found: is the pattern still right?`);
  assert.deepEqual(broken, []);
});

test('the check finds a missing page, a missing anchor, and ignores links inside code', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-links-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'a.md'),
    [
      '# A page',
      '## Client functions (hybrid tool calling)',
      '## Client functions (hybrid tool calling)',
      'See [b](b.md#the-part), [gone](gone.md), [nowhere](b.md#missing), [here](#a-page),',
      '[twice](#client-functions-hybrid-tool-calling-1), [the web](https://example.com/x.md) and `[code](gone.md)`.',
      '```md',
      '[fenced](gone-too.md)',
      '```',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'b.md'), '# B\n\n### The `part`\n');
  const { broken, checked } = brokenLinks([join(dir, 'a.md')], dir);
  assert.equal(checked, 5);
  assert.deepEqual(broken, ['a.md: gone.md (no such file)', 'a.md: b.md#missing (no heading with that anchor)']);
});

test('every code block in README.md and docs/ names its language and is closed', () => {
  const bad = PAGES.flatMap((file) => badFences(readFileSync(file, 'utf8')).map((where) => `${relative(ROOT, file)} ${where}`));
  assert.deepEqual(bad, []);
  assert.deepEqual(badFences('```ts\nx\n```\n\n```\ny\n```\n\n```sh\nz\n'), [
    'line 5: a code block without its language',
    'line 9: a code block never closed',
  ]);
});

// Prettier skips Markdown, so nothing else would stop a merge's conflict markers from landing in a page.
test('no page in README.md and docs/ holds a merge conflict marker', () => {
  const marked = PAGES.flatMap((page) =>
    readFileSync(page, 'utf8')
      .split('\n')
      .flatMap((line, i) => (/^(<{7}|={7}|>{7})( |$)/.test(line) ? [`${relative(ROOT, page)}:${i + 1}`] : [])),
  );
  assert.deepEqual(marked, []);
});
