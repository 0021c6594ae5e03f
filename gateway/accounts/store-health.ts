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

const PROBE_TIMEOUT_MS = 1_000;
const CACHE_MS = 1_000;

export interface StoreHealthReport {
  fields: { store: 'up' | 'down' };
  cannotServe: boolean;
}

export function storeHealth(
  store: Pick<AccountsStore, 'keys'>,
  options: { timeoutMs?: number; cacheMs?: number; now?: () => number } = {},
): { health(): Promise<StoreHealthReport> } {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const cacheMs = options.cacheMs ?? CACHE_MS;
  const now = options.now ?? Date.now;
  let last: { up: boolean; at: number } | undefined;
  let probing: Promise<boolean> | undefined;

  async function probe(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      // Any key will do: the read must reach SQLite and come back.
      return await Promise.race([store.keys.get('health:probe').then(() => true), late]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async health() {
      if (!last || now() - last.at >= cacheMs) {
        probing ??= probe().finally(() => (probing = undefined));
        const up = await probing;
        last = { up, at: now() };
      }
      return { fields: { store: last.up ? 'up' : 'down' }, cannotServe: !last.up };
    },
  };
}
