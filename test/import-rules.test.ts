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

/** The relative imports of a file: what each names, and whether only types come through it. */
function importsOf(file: string): Array<{ target: string; typeOnly: boolean; spec: string }> {
  const text = readFileSync(file, 'utf8');
  const found = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s+'(\.{1,2}\/[^']+)';/gm)) {
    const [, typeKeyword, what, spec] = match;
    const names = what.startsWith('{')
      ? what
          .slice(1, -1)
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean)
      : [what];
    const typeOnly = typeKeyword !== undefined || (names.length > 0 && names.every((name) => name.startsWith('type ')));
    found.push({ target: relative(ROOT, resolve(dirname(file), spec)), typeOnly, spec });
  }
  return found;
}

/** Modules every gateway layer may use, which import no layer themselves. */
const GATEWAY_LEAVES = [
  'errors',
  'health',
  'config',
  'logger',
  'metrics',
  'url-without-password',
  'id-sequence',
  'keyed-mutex',
  'wallet-address',
].map((name) => `gateway/${name}.js`);

const inFolder = (target: string, folder: string) => target.startsWith(`gateway/${folder}/`);

test('features own their stores: none imports storage/, and storage/ takes their contracts as types only', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const feature of ['http', 'chat', 'responses', 'x402', 'deposits', 'tools']) {
    for (const file of sourceFiles(join(ROOT, 'gateway', feature))) {
      for (const { target, spec } of importsOf(file)) {
        checked++;
        if (inFolder(target, 'storage')) broken.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
  }
  for (const file of sourceFiles(join(ROOT, 'gateway/storage'))) {
    for (const { target, typeOnly, spec } of importsOf(file)) {
      checked++;
      if (typeOnly || inFolder(target, 'storage') || GATEWAY_LEAVES.includes(target)) continue;
      broken.push(`${relative(ROOT, file)} imports values from ${spec}`);
    }
  }
  assert.ok(checked > 150, `only ${checked} imports found: is the pattern still right?`);
  assert.deepEqual(broken, []);
});

test('ledger/ and keys/ stand on storage/ alone: they import no feature and no mode', () => {
  const broken: string[] = [];
  for (const room of ['ledger', 'keys']) {
    for (const file of sourceFiles(join(ROOT, 'gateway', room))) {
      for (const { target, spec } of importsOf(file)) {
        if (inFolder(target, room) || inFolder(target, 'storage') || GATEWAY_LEAVES.includes(target)) continue;
        broken.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
  }
  assert.deepEqual(broken, []);
});
