/**
 * A bench's printed targets set its exit code: 1 when one was missed, 0 with `--report-only`
 * (run in a child process, since the verdict is the process's exit code).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const TARGETS = resolve(import.meta.dirname, '../../bench/targets.ts');

function verdict(checks: Array<[string, boolean]>, ...flags: string[]): { status: number | null; stdout: string } {
  const program = `import { reportTargets } from ${JSON.stringify(TARGETS)}; reportTargets('targets', ${JSON.stringify(checks)});`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program, '--', ...flags], {
    encoding: 'utf8',
  });
  return { status: child.status, stdout: child.stdout };
}

test('every target met: exit 0, each listed as met', () => {
  const { status, stdout } = verdict([['throughput 0.91 × ≥ 0.8 ×', true]]);
  assert.equal(status, 0);
  assert.equal(stdout, '\ntargets:\n  met     throughput 0.91 × ≥ 0.8 ×\n');
});

test('a missed target: exit 1 and MISSED; with --report-only the same report and exit 0', () => {
  const checks: Array<[string, boolean]> = [
    ['throughput 0.91 × ≥ 0.8 ×', true],
    ['added p50 0.31 ms ≤ 0.15 ms', false],
  ];
  const strict = verdict(checks);
  assert.equal(strict.status, 1);
  assert.match(strict.stdout, /^ {2}MISSED {2}added p50 0\.31 ms ≤ 0\.15 ms$/m);
  assert.match(strict.stdout, /1 target\(s\) missed: exit 1 \(--report-only to exit 0\)/);
  const reportOnly = verdict(checks, '--report-only');
  assert.equal(reportOnly.status, 0);
  assert.match(reportOnly.stdout, /1 target\(s\) missed \(--report-only: exit 0\)/);
});
