/**
 * Every x402 payment the gateway has sent for settlement, by its id (`<CAIP-2 network>:<EIP-3009
 * nonce>`, the id it is credited under): `pending` from the moment it is claimed until it is
 * credited, or forgotten when it certainly never settled. A pending record outlives a crash or a
 * settlement timeout, so the reconciler can finish it from the chain; a credited one answers a
 * replay. The embedded store keeps them in the DATA_DIR SQLite file
 * (`storage/sqlite/sqlite-x402-payment-records.ts`); cluster mode in PostgreSQL
 * (`storage/postgres/postgres-x402-payment-records.ts`, migration 8).
 *
 * @example
 *   const earlier = await records.claim(record)   // undefined: this call recorded it
 */
export interface X402PaymentRecord {
  id: string;
  /** The payer, which is the wallet credited; lower case. */
  wallet: string;
  network: string;
  /** The token contract, lower case. */
  asset: string;
  /** Atomic units paid. */
  amount: bigint;
  nonce: string;
  /** The signature presented: the same payment sent again carries the same one. */
  signature: string;
  /** Unix seconds after which the authorization can no longer settle. */
  validBefore: number;
  /** The chain's latest block when it was claimed: its settlement is at or after it. */
  fromBlock: bigint;
  /** The terms offered when it was claimed (lower-case pay-to, atomic units per credit): a config change never re-judges it. */
  payTo: string;
  unitsPerCredit: bigint;
  state: 'pending' | 'credited';
  /** The settlement transaction, when the facilitator reported it. */
  transaction: string | null;
}

export interface X402PaymentRecords {
  /** The record of payment `id`, if one is kept. */
  find(id: string): Promise<X402PaymentRecord | undefined>;
  /** Record `record` as pending, unless its id is already recorded: then the stored record, unchanged. */
  claim(record: Omit<X402PaymentRecord, 'state' | 'transaction'>): Promise<X402PaymentRecord | undefined>;
  /** Mark it credited (the ledger holds the credit under the same id). */
  credited(id: string, transaction: string | null): Promise<void>;
  /** Drop a pending record that certainly moved no money (refused, or expired unused on chain). */
  forget(id: string): Promise<void>;
  /** Pending records, oldest first. */
  pending(limit: number): Promise<X402PaymentRecord[]>;
}
