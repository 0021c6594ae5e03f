/**
 * The store's part of `/health`: `store: "up" | "down"`. Without the store no key can be checked
 * and no credit charged, so a store that fails means the gateway cannot serve (HTTP 503).
 * The probe is one Keyv read with a short timeout, and its answer is reused for a second so
 * load-balancer probes stay cheap; concurrent probes share one read.
 *
 * @example
 *   const health = storeHealth(accounts.store)
 *   await health.health()   // { fields: { store: 'up' }, cannotServe: false }
 */
import type { AccountsStore } from './store.js';
import { cachedProbe } from '../health.js';

export interface StoreHealthReport {
  fields: { store: 'up' | 'down' };
  cannotServe: boolean;
}

export function storeHealth(
  store: Pick<AccountsStore, 'keys'>,
  options: { timeoutMs?: number; cacheMs?: number; now?: () => number } = {},
): { health(): Promise<StoreHealthReport> } {
  // Any key will do: the read must reach SQLite and come back.
  const isUp = cachedProbe(() => store.keys.get('health:probe'), options);
  return {
    async health() {
      const up = await isUp();
      return { fields: { store: up ? 'up' : 'down' }, cannotServe: !up };
    },
  };
}
