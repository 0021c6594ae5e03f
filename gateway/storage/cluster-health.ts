/**
 * Cluster mode's part of `/health`: `store` and `postgres` ("up"/"down"; down → HTTP 503, nothing
 * can be served without keys and credits) and `redis` ("up"/"down"/"off"; down → `degraded`, HTTP
 * 200: limits fall back to each instance, nonces answer 503). The PostgreSQL probe is one
 * `select 1` with a short timeout, reused for a second so load-balancer probes stay cheap.
 *
 * @example
 *   health: [clusterHealth(db, redis), tools, upstreams.health]
 */
import { cachedProbe, type HealthContributor } from '../health.js';
import type { Database } from './postgres/database.js';
import type { SharedRedis } from './redis/shared-redis.js';

export function clusterHealth(db: Database, redis: SharedRedis | undefined): HealthContributor {
  const isUp = cachedProbe(() => db.sql`select 1`);
  return {
    async health() {
      const postgres = (await isUp()) ? 'up' : 'down';
      const redisState = redis ? (redis.up() ? 'up' : 'down') : 'off';
      return {
        fields: { store: postgres, postgres, redis: redisState },
        cannotServe: postgres === 'down',
        degraded: redisState === 'down',
      };
    },
  };
}
