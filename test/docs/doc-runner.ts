/**
 * Runs a documented snippet as a reader would, against a gateway a test started: the
 * placeholders the pages tell a reader to replace are replaced (the gateway's address
 * `127.0.0.1:8080` by the test gateway's, `0xYourWalletAddress` by the test wallet, other
 * `0xYour…` addresses by fixed test addresses), and the variables the text says to set
 * (`W`, `SWITCHYARD_KEY`, `ADMIN_TOKEN`, `PRIVATE_KEY`, …) come from the environment. A `ts` block
 * is written to a `.mts` file (top-level await works without a package.json) and run with tsx; a
 * `sh` block runs in bash with `-e -o pipefail`, and its `curl` fails on an HTTP error status
 * (`--fail-with-body`), so a request the gateway refuses fails the block. `typecheck` runs tsc
 * over the `ts` programs, as a reader's editor would.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './doc-blocks.js';

/** The fixed stand-ins for the pages' `0xYour…` addresses other than the wallet. */
const ADDRESS_PLACEHOLDERS: Record<string, string> = {
  Treasury: '0x00000000000000000000000000000000000000a1',
  PayTo: '0x00000000000000000000000000000000000000b2',
};

/** Variables a reader may have set in their shell that would change what a snippet does here. */
const READER_VARIABLES = ['W', 'WALLET', 'SWITCHYARD_KEY', 'ADMIN_TOKEN', 'PRIVATE_KEY', 'DATA_DIR', 'PORT', 'HOST', 'SWITCHYARD_CONFIG'];

export interface RunContext {
  /** The test gateway's origin, `http://127.0.0.1:PORT`. */
  gatewayUrl: string;
  /** Stands for `0xYourWalletAddress`. */
  wallet: string;
  /** The variables the page tells the reader to set. */
  env?: Record<string, string>;
  /** Files to put in the directory the snippet runs in (`wallet.txt`, …). */
  files?: Record<string, string>;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The snippet with the reader's placeholders filled in for this gateway and wallet. */
export function withPlaceholders(code: string, context: Pick<RunContext, 'gatewayUrl' | 'wallet'>): string {
  const host = new URL(context.gatewayUrl).host;
  return code.replace(/\b(?:127\.0\.0\.1|localhost):8080\b/g, host).replace(/0xYour([A-Za-z]+)/g, (whole, name: string) => {
    if (name === 'WalletAddress') return context.wallet;
    const address = ADDRESS_PLACEHOLDERS[name];
    if (!address) throw new Error(`unknown placeholder ${whole}: add it to ADDRESS_PLACEHOLDERS`);
    return address;
  });
}

/** A scratch directory inside the repository (so `openai`, `viem`, tsx resolve from its node_modules, as in a reader's project). */
function scratch(prefix: string): string {
  const dir = join(ROOT, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return mkdtempSync(join(dir, prefix));
}

/** A `curl` that fails on an HTTP error status, first on PATH: a refused request fails the snippet. */
function strictCurl(dir: string): string {
  const real = execFileSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'curl'), `#!/bin/sh\nexec ${real} --fail-with-body "$@"\n`);
  chmodSync(join(bin, 'curl'), 0o755);
  return bin;
}

/** Run one snippet (`lang` sh or ts) as written, placeholders filled; resolves with its exit code and output. */
export async function runSnippet(lang: string, code: string, context: RunContext): Promise<RunResult> {
  const dir = scratch('doc-snippet-');
  try {
    for (const [name, text] of Object.entries(context.files ?? {})) writeFileSync(join(dir, name), text);
    const parentEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !READER_VARIABLES.includes(name)));
    const env: NodeJS.ProcessEnv = { ...parentEnv, ...context.env };
    let command: string;
    let args: string[];
    if (lang === 'ts') {
      const file = join(dir, 'snippet.mts');
      writeFileSync(file, withPlaceholders(code, context));
      [command, args] = [process.execPath, ['--import', 'tsx', file]];
    } else if (lang === 'sh') {
      const file = join(dir, 'snippet.sh');
      writeFileSync(file, withPlaceholders(code, context));
      env.PATH = `${strictCurl(dir)}:${env.PATH ?? ''}`;
      [command, args] = ['bash', ['-e', '-o', 'pipefail', file]];
    } else {
      throw new Error(`a ${lang} block does not run`);
    }
    try {
      const { stdout, stderr } = await promisify(execFile)(command, args, { cwd: dir, env, timeout: 120_000, maxBuffer: 16 << 20 });
      return { exitCode: 0, stdout, stderr };
    } catch (err) {
      const failed = err as { code?: number | string; stdout?: string; stderr?: string };
      if (typeof failed.code !== 'number') throw err;
      return { exitCode: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * tsc over `ts` programs (name → code), each its own `.mts` module, strict, as a reader's project
 * on Node 20 would compile them. Resolves with tsc's report: empty when they type-check.
 */
export async function typecheck(programs: Record<string, string>): Promise<string> {
  const dir = scratch('doc-typecheck-');
  try {
    for (const [name, code] of Object.entries(programs)) writeFileSync(join(dir, `${name}.mts`), code);
    const compilerOptions = {
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.mts'] }));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    try {
      await promisify(execFile)(process.execPath, [tsc, '-p', dir], { cwd: dir, timeout: 300_000 });
      return '';
    } catch (err) {
      const failed = err as { stdout?: string; stderr?: string };
      if (failed.stdout === undefined) throw err;
      return `${failed.stdout}${failed.stderr ?? ''}`.replaceAll(`${dir}/`, '').trim();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
