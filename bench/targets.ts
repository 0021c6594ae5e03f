/**
 * The targets a bench prints, as its verdict: each listed as met or MISSED, and the exit code 1
 * when one was missed, so a run that misses a printed target fails a script or CI job.
 * `--report-only` prints the same and exits 0 (a run on a loaded machine, a look at the figures).
 *
 * @example
 *   reportTargets('targets (issue 11)', [['throughput 0.91× ≥ 0.8×', 0.91 >= 0.8]])
 */
export type TargetCheck = [what: string, met: boolean];

export function reportTargets(title: string, checks: TargetCheck[], argv: readonly string[] = process.argv): void {
  console.log(`\n${title}:`);
  for (const [what, met] of checks) console.log(`  ${met ? 'met   ' : 'MISSED'}  ${what}`);
  const missed = checks.filter(([, met]) => !met).length;
  const reportOnly = argv.includes('--report-only');
  if (missed) console.log(`${missed} target(s) missed${reportOnly ? ' (--report-only: exit 0)' : ': exit 1 (--report-only to exit 0)'}`);
  process.exitCode = missed && !reportOnly ? 1 : 0;
}
