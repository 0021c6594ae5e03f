/**
 * The checks every ledger makes on the amounts it is given, with one wording: credits are whole
 * numbers within JavaScript's exact range.
 *
 * @example
 *   positiveInteger(amount, 'amount')    // a hold or a grant
 *   nonNegativeInteger(cost, 'cost')      // a settle or a charge may be 0
 */
export function positiveInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
}

export function nonNegativeInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
}

/** The largest single grant (admin API and CLI): far above any real top-up, far below 2^53. */
export const MAX_GRANT = 1_000_000_000_000;
