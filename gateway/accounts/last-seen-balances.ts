/**
 * The spendable balance this process last saw for each wallet (after a settle, or in a refused
 * hold), so a charge can tell whether its first hold will very likely be granted before the
 * ledger has answered. A hint only: other requests and instances spend too, and the ledger
 * still decides every hold. Bounded: past `maxWallets` the wallet seen longest ago is forgotten.
 *
 * @example
 *   const seen = new LastSeenBalances(10_000)
 *   seen.record(wallet, 42)
 *   seen.get(wallet) // 42
 */
export class LastSeenBalances {
  private readonly balances = new Map<string, number>();

  constructor(private readonly maxWallets: number) {}

  get(wallet: string): number | undefined {
    return this.balances.get(wallet);
  }

  record(wallet: string, credits: number): void {
    // Delete first so the wallet moves to the end of the insertion order (the newest).
    this.balances.delete(wallet);
    this.balances.set(wallet, credits);
    if (this.balances.size > this.maxWallets) this.balances.delete(this.balances.keys().next().value!);
  }
}
