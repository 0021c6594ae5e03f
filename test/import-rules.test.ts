/**
 * The import rules docs/ARCHITECTURE.md draws, checked on every relative import of every source
 * file: between the top-level folders (gateway/ and tool-servers/ never import each other, and
 * chains/, which both use, imports neither), and between the gateway's own layers (the shared leaf
 * modules import none of them, http/ → chat/ → tools/, the HTTP edge and its route groups, who may
 * use x402/, and the rooms that keep state: a feature owns its store's contract, storage/ implements
 * it and no feature imports storage/). Each rule is its own test, so a failure names the arrow it breaks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every source file of the folders the rules are about, from the repository root. */
const FILES = ['gateway', 'tool-servers', 'chains', 'telemetry'].flatMap((folder) =>
  sourceFiles(join(ROOT, folder)).map((path) => relative(ROOT, path)),
);

/** Every relative import of those files: importing file → imported file, both from the repository root. */
const IMPORTS: Array<{ file: string; target: string; spec: string }> = FILES.flatMap((file) =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) => ({
    file,
    target: relative(ROOT, resolve(ROOT, dirname(file), match[1])).replace(/\.js$/, '.ts'),
    spec: match[1],
  })),
);

const under = (folder: string) => (path: string) => path.startsWith(`${folder}/`);
const oneOf =
  (...paths: string[]) =>
  (path: string) =>
    paths.includes(path);
const anyOf =
  (...tests: Array<(path: string) => boolean>) =>
  (path: string) =>
    tests.some((t) => t(path));
const not = (t: (path: string) => boolean) => (path: string) => !t(path);

/** Shared by every layer, importing none of them (only each other). */
const LEAVES = [
  'config',
  'errors',
  'health',
  'logger',
  'metrics',
  'pricing',
  'url-without-password',
  'wallet-address',
  'keyed-mutex',
  'id-sequence',
].map((name) => `gateway/${name}.ts`);
/** tracing/ is shared the same way: every layer hands its spans down, and it imports no layer. */
const leaf = anyOf(oneOf(...LEAVES), under('gateway/tracing'));
/** The composition root: it builds every part, so it may import any (stores/ is its mode switch: it opens every store). */
const root = anyOf(oneOf('gateway/main.ts', 'gateway/server.ts', 'gateway/app.ts'), under('gateway/stores'));
/** The features: each owns the contracts of the stores it needs, and none imports a database. */
const feature = anyOf(
  ...['http', 'chat', 'responses', 'messages', 'x402', 'deposits', 'tools'].map((folder) => under(`gateway/${folder}`)),
);
/** A route group: a file of http/routes/, or the MCP endpoint (the http/mcp/ folder as one group). */
const routeGroup = anyOf(under('gateway/http/routes'), under('gateway/http/mcp'));

interface Rule {
  /** The arrow, as docs/ARCHITECTURE.md says it. */
  says: string;
  /** The importing files the rule holds for. */
  from: (file: string) => boolean;
  /** Whether the rule refuses an import of `target` by `file`. */
  refuses: (target: string, file: string) => boolean;
}

const RULES: Rule[] = [
  { says: 'gateway/ never imports tool-servers/', from: under('gateway'), refuses: under('tool-servers') },
  { says: 'tool-servers/ never imports gateway/', from: under('tool-servers'), refuses: under('gateway') },
  {
    says: 'chains/ imports nothing from gateway/ or tool-servers/',
    from: under('chains'),
    refuses: anyOf(under('gateway'), under('tool-servers')),
  },
  {
    says: `the shared leaf modules (${LEAVES.join(', ')}, tracing/) import none of the layers (of the top level, telemetry/ and chains/ only)`,
    from: leaf,
    refuses: (target) => !leaf(target) && !under('telemetry')(target) && !under('chains')(target),
  },
  {
    says: 'telemetry/ (the OpenTelemetry settings and SDK both sides use) imports nothing from gateway/, tool-servers/ or chains/',
    from: under('telemetry'),
    refuses: anyOf(under('gateway'), under('tool-servers'), under('chains')),
  },
  {
    says: 'tools/ imports only the leaf modules',
    from: under('gateway/tools'),
    refuses: (target) => under('gateway')(target) && !under('gateway/tools')(target) && !leaf(target),
  },
  {
    says: 'chat/ imports tools/, the leaf modules, telemetry/’s names and, of ledger/, only the Charger contract (ledger/charging.ts)',
    from: under('gateway/chat'),
    refuses: not(anyOf(under('gateway/chat'), under('gateway/tools'), leaf, under('telemetry'), oneOf('gateway/ledger/charging.ts'))),
  },
  {
    says: 'responses/ imports chat/ and the leaf modules (its store contract is its own, responses/response-store.ts)',
    from: under('gateway/responses'),
    refuses: not(anyOf(under('gateway/responses'), under('gateway/chat'), leaf)),
  },
  {
    says: 'messages/ imports chat/ and the leaf modules (the Anthropic Messages format over the chat loop; it keeps no store)',
    from: under('gateway/messages'),
    refuses: not(anyOf(under('gateway/messages'), under('gateway/chat'), leaf)),
  },
  {
    says: 'http/ is the edge: only the composition root (app.ts, server.ts, stores/) imports it',
    from: not(anyOf(under('gateway/http'), root)),
    refuses: under('gateway/http'),
  },
  {
    says: 'http/ never imports stores/ or cli/',
    from: under('gateway/http'),
    refuses: anyOf(under('gateway/stores'), under('gateway/cli')),
  },
  {
    says: 'no route file imports another (a file of http/routes/ or the MCP endpoint, http/mcp/, imports no other route group)',
    from: routeGroup,
    refuses: (target, file) => routeGroup(target) && !(under('gateway/http/mcp')(file) && under('gateway/http/mcp')(target)),
  },
  {
    says: 'the rest of http/ (middleware/, openapi/, sse/, the shared files) imports no route group: app.ts wires them',
    from: (file) => under('gateway/http')(file) && !routeGroup(file),
    refuses: routeGroup,
  },
  {
    says:
      'x402/ is used by the pay-on-402 middleware (http/middleware/x402-payment.ts) and the composition root only ' +
      '(and, of its payment records contract, x402/payment-records.ts, by storage/, which implements it)',
    from: not(anyOf(under('gateway/x402'), root, oneOf('gateway/http/middleware/x402-payment.ts'))),
    refuses: (target, file) =>
      under('gateway/x402')(target) && !(under('gateway/storage')(file) && target === 'gateway/x402/payment-records.ts'),
  },
  {
    says: 'no feature imports storage/: a feature owns its store contract, storage/ implements it',
    from: feature,
    refuses: under('gateway/storage'),
  },
  {
    says: 'ledger/ and keys/ stand on storage/ alone: they import no feature and no mode, only storage/, the leaf modules and chains/',
    from: anyOf(under('gateway/ledger'), under('gateway/keys')),
    refuses: (target, file) =>
      under('gateway')(target) && !anyOf(under(file.split('/').slice(0, 2).join('/')), under('gateway/storage'), leaf)(target),
  },
  {
    says: "storage/ implements, it composes nothing: it never imports stores/, the ledgers (only their usage records' contract), the key stores or the CLI",
    from: under('gateway/storage'),
    refuses: (target) =>
      anyOf(under('gateway/stores'), under('gateway/cli'))(target) ||
      ((under('gateway/ledger')(target) || under('gateway/keys')(target)) &&
        !oneOf('gateway/keys/siwe.ts', 'gateway/keys/api-keys.ts', 'gateway/ledger/usage.ts')(target)),
  },
];

test('the import pattern still finds the imports, and every folder a rule names exists', () => {
  assert.ok(IMPORTS.length > 300, `only ${IMPORTS.length} imports found: is the pattern still right?`);
  const missing = IMPORTS.filter(({ target }) => !existsSync(join(ROOT, target))).map(({ file, spec }) => `${file} imports ${spec}`);
  assert.deepEqual(missing, [], 'an import the checks cannot resolve');
  for (const path of [...LEAVES, 'gateway/ledger/charging.ts', 'gateway/responses/response-store.ts', 'gateway/x402/payment-records.ts']) {
    assert.ok(existsSync(join(ROOT, path)), `${path} is named by a rule but does not exist`);
  }
  for (const folder of [
    'tools',
    'chat',
    'responses',
    'messages',
    'http/routes',
    'http/mcp',
    'http/middleware',
    'x402',
    'deposits',
    'ledger',
    'keys',
    'storage',
    'stores',
    'cli',
    'tracing',
  ]) {
    assert.ok(existsSync(join(ROOT, 'gateway', folder)), `gateway/${folder} is named by a rule but does not exist`);
  }
});

for (const rule of RULES) {
  test(rule.says, () => {
    assert.ok(FILES.some(rule.from), 'the rule holds for no file: is it still about the current tree?');
    const broken = IMPORTS.filter(({ file }) => rule.from(file))
      .filter(({ file, target }) => rule.refuses(target, file))
      .map(({ file, spec }) => `${file} imports ${spec}`);
    assert.deepEqual(broken, []);
  });
}

/** Whether only types come through each relative import statement of `file` (`import type`, or every name `type`). */
function typeOnlyImports(file: string): Array<{ target: string; typeOnly: boolean; spec: string }> {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s+'(\.{1,2}\/[^']+)';/gm)].map(([, typeKeyword, what, spec]) => {
    const names = what.startsWith('{')
      ? what
          .slice(1, -1)
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean)
      : [what];
    const typeOnly = typeKeyword !== undefined || (names.length > 0 && names.every((name) => name.startsWith('type ')));
    return { target: relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, '.ts'), typeOnly, spec };
  });
}

test('storage/ takes the contracts it implements as types only: of the gateway, only storage/ and the leaf modules give it values', () => {
  const files = FILES.filter(under('gateway/storage'));
  assert.ok(files.length > 20, `only ${files.length} files in storage/: is the folder still there?`);
  const broken = files.flatMap((file) =>
    typeOnlyImports(file)
      .filter(({ target, typeOnly }) => !typeOnly && under('gateway')(target) && !under('gateway/storage')(target) && !leaf(target))
      .map(({ spec }) => `${file} imports values from ${spec}`),
  );
  assert.deepEqual(broken, []);
});
