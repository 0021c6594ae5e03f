/**
 * Start the BUILT gateway exactly as `npm start` does (`node <the start script's flags>
 * dist/gateway/main.js` from the repo root with the shipped config), on a free port and a temporary data directory. Run
 * `npm run build` first (`npm test` does).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const MAIN_JS = join(REPO_ROOT, 'dist/gateway/main.js');
/** The node flags of package.json's start script (the heap cap). */
export const START_FLAGS = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));

export interface BuiltGateway {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
  dataDir: string;
  /** Kill it if still running and remove the data directory. */
  cleanup(): Promise<void>;
}

/** Spawn `node dist/gateway/main.js`; `env` is added to this process's environment. */
export function spawnBuiltGateway(env: Record<string, string> = {}): BuiltGateway {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-built-'));
  // NODE_V8_COVERAGE passes through, so c8 counts the child's coverage too.
  const child = spawn(process.execPath, [...START_FLAGS, MAIN_JS], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | string>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit(code ?? signal ?? 'unknown'));
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    dataDir,
    async cleanup() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Wait until a stdout log line satisfies `match`; fails with the output so far after `timeoutMs`. */
export async function waitForLogLine(
  gateway: BuiltGateway,
  match: (line: Record<string, unknown>) => boolean,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const text of gateway.stdout().split('\n')) {
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as Record<string, unknown>;
      if (match(line)) return line;
    }
    if (gateway.child.exitCode !== null) {
      throw new Error(`gateway exited (${gateway.child.exitCode}): ${gateway.stderr()}\n${gateway.stdout()}`);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for a log line; stdout so far:\n${gateway.stdout()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Spawn the built gateway and wait for its "gateway listening" line; returns its base URL. */
export async function startBuiltGateway(env: Record<string, string> = {}): Promise<BuiltGateway & { url: string }> {
  const gateway = spawnBuiltGateway(env);
  try {
    const line = await waitForLogLine(gateway, (l) => l.msg === 'gateway listening');
    return Object.assign(gateway, { url: String(line.url) });
  } catch (err) {
    await gateway.cleanup();
    throw err;
  }
}
