/**
 * Cluster mode's part of `/health`: `store` and `postgres` ("up"/"down"; down → HTTP 503, nothing
 * can be served without keys and credits) and `redis` ("up"/"down"/"off"; down → `degraded`, HTTP
 * 200: limits fall back to each instance, nonces answer 503). The PostgreSQL probe is one
 * `select 1` with a short timeout, reused for a second so load-balancer probes stay cheap.
 *
 * @example
 *   health: [clusterHealth(db, redis), tools, upstreams.health]
 */
import type { HealthContributor } from '../health.js';
import type { Database } from '../accounts/postgres/database.js';
import type { SharedRedis } from './shared-redis.js';

const PROBE_TIMEOUT_MS = 1_000;
const CACHE_MS = 1_000;

export function clusterHealth(db: Database, redis: SharedRedis | undefined): HealthContributor {
  let last: { up: boolean; at: number } | undefined;
  let probing: Promise<boolean> | undefined;

  async function probe(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([db.sql`select 1`.then(() => true), late]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async health() {
      if (!last || Date.now() - last.at >= CACHE_MS) {
        probing ??= probe().finally(() => (probing = undefined));
        const up = await probing;
        last = { up, at: Date.now() };
      }
      const postgres = last.up ? 'up' : 'down';
      const redisState = redis ? (redis.up() ? 'up' : 'down') : 'off';
      return { fields: { store: postgres, postgres, redis: redisState }, cannotServe: !last.up, degraded: redisState === 'down' };
    },
  };
}
