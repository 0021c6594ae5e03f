import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric the gateway exposes, on its own registry (no global state, so tests
 * can run several gateways in one process). Routes are labelled by template, never raw path.
 */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  toolCalls: Counter<'tool' | 'outcome'>;
  toolDuration: Histogram<'tool' | 'outcome'>;
  chatRounds: Histogram<'model'>;
  chatTokens: Counter<'model' | 'kind'>;
  chatCredits: Counter<'model'>;
  depositsSeen: Counter<'chain'>;
  depositsCredited: Counter<'chain'>;
  depositCredits: Counter<'chain'>;
  depositsReorged: Counter<'chain'>;
  depositWatcherBlocksBehind: Gauge<'chain'>;
  depositWatcherLastProgress: Gauge<'chain'>;
  /** x402 payments by outcome (credited, replayed, refused, pending, facilitator_unavailable, reconciled, forgotten). */
  x402Payments: Counter<'outcome'>;
  /** Per deployment of a model (`upstreams[].name`, `default` for a lone `upstream`); children made once per deployment. */
  upstreamRequests: Counter<'model' | 'deployment'>;
  upstreamFailures: Counter<'model' | 'deployment'>;
  upstreamOutstanding: Gauge<'model' | 'deployment'>;
  upstreamCooldowns: Counter<'model' | 'deployment'>;
  upstreamFailovers: Counter<'model' | 'deployment'>;
  upstreamAffinityMoves: Counter<'model' | 'deployment'>;
  /** Spans the trace exporter lost (its queue was full, or an export failed); 0 with tracing off. */
  traceSpansDropped: Counter;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchyard_' });
  const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
  return {
    registry,
    traceSpansDropped: new Counter({
      name: 'switchyard_trace_spans_dropped_total',
      help: 'Trace spans dropped: the export queue was full or an export failed (docs/tracing.md)',
      registers: [registry],
    }),
    httpRequests: new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'switchyard_http_request_duration_seconds',
      help: 'HTTP request latency by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    toolCalls: new Counter({
      name: 'switchyard_tool_calls_total',
      help: 'Tool calls by tool and outcome (ok or an error code)',
      labelNames: ['tool', 'outcome'],
      registers: [registry],
    }),
    toolDuration: new Histogram({
      name: 'switchyard_tool_call_duration_seconds',
      help: 'Tool call latency by tool and outcome',
      labelNames: ['tool', 'outcome'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    chatRounds: new Histogram({
      name: 'switchyard_chat_tool_rounds',
      help: 'Tool rounds per chat request',
      labelNames: ['model'],
      buckets: [0, 1, 2, 3, 4, 5, 6, 7, 8],
      registers: [registry],
    }),
    chatTokens: new Counter({
      name: 'switchyard_chat_tokens_total',
      help: 'Upstream tokens by model and kind (prompt, completion)',
      labelNames: ['model', 'kind'],
      registers: [registry],
    }),
    chatCredits: new Counter({
      name: 'switchyard_chat_credits_charged_total',
      help: 'Credits charged for chat requests',
      labelNames: ['model'],
      registers: [registry],
    }),
    depositsSeen: new Counter({
      name: 'switchyard_deposits_seen_total',
      help: 'Deposit transfers to the treasury first seen on chain, by chain',
      labelNames: ['chain'],
      registers: [registry],
    }),
    depositsCredited: new Counter({
      name: 'switchyard_deposits_credited_total',
      help: 'Deposits credited after their confirmations, by chain',
      labelNames: ['chain'],
      registers: [registry],
    }),
    depositCredits: new Counter({
      name: 'switchyard_deposit_credits_total',
      help: 'Credits added by deposits, by chain',
      labelNames: ['chain'],
      registers: [registry],
    }),
    depositsReorged: new Counter({
      name: 'switchyard_deposits_reorged_total',
      help: 'Pending deposits whose block a reorg replaced, by chain',
      labelNames: ['chain'],
      registers: [registry],
    }),
    depositWatcherBlocksBehind: new Gauge({
      name: 'switchyard_deposit_watcher_blocks_behind',
      help: 'Blocks between the chain head and what the deposit watcher has scanned, as of its last read',
      labelNames: ['chain'],
      registers: [registry],
    }),
    depositWatcherLastProgress: new Gauge({
      name: 'switchyard_deposit_watcher_last_progress_timestamp_seconds',
      help: 'When the deposit watcher last scanned a page or completed a pass (unix seconds; time() minus this is how long it has been stuck)',
      labelNames: ['chain'],
      registers: [registry],
    }),
    x402Payments: new Counter({
      name: 'switchyard_x402_payments_total',
      help: 'x402 payments by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    upstreamRequests: new Counter({
      name: 'switchyard_upstream_requests_total',
      help: 'Upstream calls sent, by model and deployment (each attempt of a retried or failed-over call counts)',
      labelNames: ['model', 'deployment'],
      registers: [registry],
    }),
    upstreamFailures: new Counter({
      name: 'switchyard_upstream_failures_total',
      help: 'Upstream calls that failed (no connection, 5xx, 429, timeout, broken stream), by model and deployment',
      labelNames: ['model', 'deployment'],
      registers: [registry],
    }),
    upstreamOutstanding: new Gauge({
      name: 'switchyard_upstream_outstanding',
      help: 'Upstream calls this instance has sent and not yet finished, by model and deployment',
      labelNames: ['model', 'deployment'],
      registers: [registry],
    }),
    upstreamCooldowns: new Counter({
      name: 'switchyard_upstream_cooldowns_total',
      help: 'Times a deployment was cooled down (failures within the window, or a 429), by model and deployment',
      labelNames: ['model', 'deployment'],
      registers: [registry],
    }),
    upstreamFailovers: new Counter({
      name: 'switchyard_upstream_failovers_total',
      help: 'Upstream calls that failed on this deployment and were sent to another, by model and deployment',
      labelNames: ['model', 'deployment'],
      registers: [registry],
    }),
    upstreamAffinityMoves: new Counter({
      name: 'switchyard_upstream_affinity_moves_total',
      help: "Calls sent elsewhere than their conversation's deployment because it had too many outstanding, by model and that deployment",
      labelNames: ['model', 'deployment'],
      registers: [registry],
    }),
  };
}
