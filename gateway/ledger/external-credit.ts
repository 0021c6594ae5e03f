/**
 * The arithmetic of an outside payment (`Ledger.creditExternal`), shared by both ledgers: whole
 * credits from the kept remainder plus the paid units, and what stays below one credit.
 *
 * @example
 *   creditsFor(600n, { units: 1_500n, unitsPerCredit: 1_000n })   // { credits: 2, remainder: 100n }
 */
import type { ExternalCredit } from './ledger.js';

/** RangeError for a payment no ledger may record: the same checks on every implementation. */
export function validateExternalCredit(credit: ExternalCredit): void {
  if (typeof credit.units !== 'bigint' || credit.units <= 0n) throw new RangeError(`units must be a positive bigint, got ${credit.units}`);
  if (typeof credit.unitsPerCredit !== 'bigint' || credit.unitsPerCredit <= 0n) {
    throw new RangeError(`unitsPerCredit must be a positive bigint, got ${credit.unitsPerCredit}`);
  }
  if (credit.externalId.length === 0) throw new RangeError('externalId must not be empty');
  if (credit.remainderKey.length === 0) throw new RangeError('remainderKey must not be empty');
}

/** Whole credits of `kept + units` and the new remainder (the ledger refuses a total past 2^53 − 1). */
export function creditsFor(kept: bigint, credit: Pick<ExternalCredit, 'units' | 'unitsPerCredit'>): { credits: number; remainder: bigint } {
  const total = kept + credit.units;
  return { credits: Number(total / credit.unitsPerCredit), remainder: total % credit.unitsPerCredit };
}

/** Whether a stored payment is the one asked for again (same wallet, units, rate and remainder key). */
export function sameExternalCredit(
  stored: Pick<ExternalCredit, 'wallet' | 'units' | 'unitsPerCredit' | 'remainderKey'>,
  asked: ExternalCredit,
): boolean {
  return (
    stored.wallet === asked.wallet.toLowerCase() &&
    stored.units === asked.units &&
    stored.unitsPerCredit === asked.unitsPerCredit &&
    stored.remainderKey === asked.remainderKey
  );
}
