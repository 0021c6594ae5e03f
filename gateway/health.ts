/** How the parts of the gateway (store, tool servers, upstreams) report into `GET /health`. */

/** What one part reports into `/health`. */
export interface HealthReport {
  /** Fields merged into the health body. */
  fields: Record<string, unknown>;
  /** The part works below par (a tool server or upstream down): status `degraded`, HTTP 200. */
  degraded?: boolean;
  /** Without this part the gateway cannot serve at all (the store): status `degraded`, HTTP 503. */
  cannotServe?: boolean;
  /** The instance is stopping (SIGTERM, `server.drainDelayMs`): status `draining`, HTTP 503. */
  draining?: boolean;
}

/** A part of the gateway that reports into `/health` (store, tool servers, upstream models). */
export interface HealthContributor {
  /** Called on every probe: keep it cheap (cache anything that does I/O). */
  health(): HealthReport | Promise<HealthReport>;
}

/**
 * A store's liveness check for `/health`: `check` must reach the store and come back within
 * `timeoutMs`; its answer is reused for `cacheMs` so load-balancer probes stay cheap, and
 * concurrent probes share one check.
 *
 * @example
 *   const isUp = cachedProbe(() => db.sql`select 1`)
 *   await isUp()   // true, or false when the check failed or was late
 */
export function cachedProbe(
  check: () => Promise<unknown>,
  options: { timeoutMs?: number; cacheMs?: number; now?: () => number } = {},
): () => Promise<boolean> {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const cacheMs = options.cacheMs ?? 1_000;
  const now = options.now ?? Date.now;
  let last: { up: boolean; at: number } | undefined;
  let probing: Promise<boolean> | undefined;

  async function probe(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([check().then(() => true), late]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  return async () => {
    if (!last || now() - last.at >= cacheMs) {
      probing ??= probe().finally(() => (probing = undefined));
      const up = await probing;
      last = { up, at: now() };
    }
    return last.up;
  };
}
