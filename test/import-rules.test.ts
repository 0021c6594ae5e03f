/**
 * The import rules docs/ARCHITECTURE.md states between top-level folders: gateway/ and
 * tool-servers/ never import each other (they meet over MCP), and chains/, which both use, imports
 * neither. Checked on every relative import of every source file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** Top-level folder → the top-level folders it may not import. */
const FORBIDDEN: Record<string, string[]> = {
  gateway: ['tool-servers'],
  'tool-servers': ['gateway'],
  chains: ['gateway', 'tool-servers'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('gateway/ and tool-servers/ never import each other, and chains/ imports neither', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const [folder, forbidden] of Object.entries(FORBIDDEN)) {
    for (const file of sourceFiles(join(ROOT, folder))) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        checked++;
        const target = relative(ROOT, resolve(dirname(file), match[1])).split('/')[0];
        if (forbidden.includes(target)) broken.push(`${relative(ROOT, file)} imports ${match[1]}`);
      }
    }
  }
  assert.ok(checked > 300, `only ${checked} imports found: is the pattern still right?`);
  assert.deepEqual(broken, []);
});
