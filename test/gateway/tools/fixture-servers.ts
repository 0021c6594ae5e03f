/**
 * Helpers for tool host tests: config entries for the fixture MCP servers in test/fixtures/mcp,
 * the environment a child needs to run at all, and checks by pid.
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { GatewayError } from '../../../gateway/errors.js';
import type { Logger } from '../../../gateway/logger.js';

export const FIXTURE_DIR = 'test/fixtures/mcp';

export interface FixtureOptions {
  env?: Record<string, string>;
  /** Extra arguments after the script. */
  args?: string[];
  prefix?: string;
  timeoutMs?: number;
  disabled?: boolean;
}

/** An `mcpServers` entry that runs `test/fixtures/mcp/<name>.ts` through tsx. */
export function fixtureServer(name: string, options: FixtureOptions = {}) {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', `${FIXTURE_DIR}/${name}.ts`, ...(options.args ?? [])],
    env: options.env ?? {},
    timeoutMs: options.timeoutMs ?? 30_000,
    disabled: options.disabled ?? false,
    prefix: options.prefix ?? '',
  };
}

/** What the gateway's own environment must hold for children to run (and for c8 to see them). */
export function runnableEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'NODE_V8_COVERAGE']) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  return { ...env, ...extra };
}

/** A logger for host tests that keeps every line for assertions. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'debug', base: undefined },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Poll `check` until it is true; fail naming `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Run `call` and return the GatewayError it must throw. */
export async function failure(call: Promise<unknown>): Promise<GatewayError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}
