/**
 * Embedded mode's part of `/health`: `store: "up" | "down"`. Without the store no key can be checked
 * and no credit charged, so a store that fails means the gateway cannot serve (HTTP 503).
 * The probe (`DataDirStores.probe`: a read of the keys' file and a commit on the ledger's) runs with a
 * short timeout, and its answer is reused for a second so load-balancer probes stay cheap;
 * concurrent probes share one run.
 *
 * @example
 *   const health = storeHealth(dataDirStores)
 *   await health.health()   // { fields: { store: 'up' }, cannotServe: false }
 */
import { cachedProbe } from '../health.js';

export interface StoreHealthReport {
  fields: { store: 'up' | 'down' };
  cannotServe: boolean;
}

export function storeHealth(
  store: { probe(): Promise<unknown> },
  options: { timeoutMs?: number; cacheMs?: number; now?: () => number } = {},
): { health(): Promise<StoreHealthReport> } {
  const isUp = cachedProbe(() => store.probe(), options);
  return {
    async health() {
      const up = await isUp();
      return { fields: { store: up ? 'up' : 'down' }, cannotServe: !up };
    },
  };
}
