/**
 * What the middleware leaves on `ctx.state`, typed once for every Koa context in the gateway
 * (Koa's own declaration-merging hook), so no handler casts what it reads.
 */
import type { GatewayError } from '../errors.js';
import type { TraceSpan } from '../tracing/trace-span.js';
import type { KeyLimits } from '../ledger/key-budgets.js';

export interface GatewayState {
  /** Set by request-context (outermost): echoed in `x-request-id` and every log line. */
  requestId: string;
  /** The caller's wallet, lower case; set by `requireWallet` (read it with `callerWallet`). */
  wallet?: string;
  /** The presented key, set by `authenticate` when one was sent. */
  apiKey?: { id: string; verified: boolean; limits?: KeyLimits };
  /** The error that answered the request, for the request log (a 5xx's detail goes only there). */
  error?: GatewayError;
  /** A chat of a model with several deployments: those whose answers it used, for the request log (never the body). */
  deployments?: string[];
  /** Admission checks still in flight (http/middleware/admission.ts): awaited at the route's gate. */
  checks?: Array<Promise<unknown>>;
  /** The request's server span, with tracing on (read it with `traceOf`, NO_SPAN when off). */
  trace?: TraceSpan;
  /** A route's own error body shape (e.g. `{ok: false, tool, error}` on /v1/tools/execute). */
  errorBody?: (err: GatewayError) => unknown;
}

declare module 'koa' {
  interface DefaultState extends GatewayState {}
}
