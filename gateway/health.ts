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
