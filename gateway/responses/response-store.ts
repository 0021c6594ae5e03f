/**
 * Stored responses of `POST /v1/responses` (`store: true`), per wallet: the contract both modes'
 * stores keep (embedded: the DATA_DIR SQLite file, storage/sqlite/sqlite-response-store.ts;
 * cluster: PostgreSQL, storage/postgres/postgres-response-store.ts). A record's body is opaque
 * JSON here; the responses layer writes and checks it. Each wallet keeps at most `maxPerWallet`
 * records and `maxBytesPerWallet` bytes of bodies: storing one more drops the wallet's oldest
 * until both hold. Expired records are never returned, and `sweep` deletes them. Each record's
 * output items are indexed by their ids (`findItems`, for `item_reference` input items); an item
 * goes with its record, however the record goes (deleted, expired, dropped for the quota).
 *
 * @example
 *   await store.put({ id: 'resp_…', wallet, createdAt: now, expiresAt: now + ttl, body, itemIds: ['msg_…'] })
 *   const body = await store.get('resp_…', wallet, Date.now())   // undefined for another wallet
 *   const found = await store.findItems(['msg_…'], wallet, Date.now()) // found.responseOf.get('msg_…') === 'resp_…'
 */

export interface StoredResponse {
  id: string;
  /** The wallet that created it, lower-case: the only one that may read, continue or delete it. */
  wallet: string;
  createdAt: number;
  expiresAt: number;
  /** JSON text; its UTF-8 length counts against the wallet's byte quota. */
  body: string;
  /** The ids of its output items, each unique across every record. */
  itemIds: string[];
}

/** What `findItems` found: the record holding each item, and each such record's body once. */
export interface FoundItems {
  /** Item id → the id of the record holding it. */
  responseOf: Map<string, string>;
  /** Record id → its body. */
  bodies: Map<string, string>;
}

export interface ResponseQuota {
  maxPerWallet: number;
  maxBytesPerWallet: number;
}

/** Stored responses (POST /v1/responses): the per-wallet quota and how often expired ones are swept. */
export interface ResponseStoreSettings extends ResponseQuota {
  sweepIntervalMs: number;
}

export interface ResponseStore {
  /**
   * Keep `record`, dropping the wallet's oldest records until the quota holds again. False (and
   * nothing stored) when the body alone is larger than the byte quota.
   */
  put(record: StoredResponse): Promise<boolean>;
  /** The body of the wallet's record `id` unless it expired by `now`; undefined otherwise. */
  get(id: string, wallet: string, now: number): Promise<string | undefined>;
  /** The wallet's records, unexpired by `now`, holding any of the items `itemIds`; items not found are absent. */
  findItems(itemIds: string[], wallet: string, now: number): Promise<FoundItems>;
  /** Delete the wallet's record `id`; false when it has none (or it expired). */
  delete(id: string, wallet: string, now: number): Promise<boolean>;
  /** Delete every record expired by `now`; how many went. */
  sweep(now: number): Promise<number>;
}

/**
 * Run `store.sweep` every `intervalMs` (unref'd: it never keeps the process alive); the returned
 * function stops it. A failing sweep is reported and retried at the next tick.
 */
export function sweepEvery(store: ResponseStore, intervalMs: number, onError: (err: unknown) => void): () => void {
  const timer = setInterval(() => {
    store.sweep(Date.now()).catch(onError);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
