import type { Context, Next } from 'koa';
import { echoed, GatewayError, toGatewayError } from '../../errors.js';
import { BodyAborted } from './json-body.js';
import { messageErrorBody, speaksMessages } from '../../messages/message-errors.js';

/**
 * The one place errors become responses. Client errors of the HTTP stack (which carry an
 * http-errors `status`) keep their status; anything unknown is a generic 500 whose detail goes
 * only to the log (`ctx.state.error`). The body reader (json-body.ts) maps its own failures.
 */
export function errorHandler() {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (thrown) {
      if (thrown instanceof BodyAborted) {
        // The client left while sending its body: nobody to answer; 499 for the request log.
        ctx.status = 499;
        ctx.respond = false;
        return;
      }
      const err = fromHttpError(thrown) ?? toGatewayError(thrown);
      ctx.state.error = err;
      if (ctx.headerSent || !ctx.writable) return; // a stream already began: the SSE writer reports in-band
      ctx.status = err.status;
      ctx.set(err.headers);
      ctx.body = bodyFor(ctx, err);
    }
  };
}

/**
 * Routes may shape the error body differently (e.g. `/v1/tools/execute` adds `ok` and `tool`); a
 * path of the Anthropic Messages API answers every error in that format, whichever layer raised it
 * (the per-IP budget, auth, the body reader, x402), so it is chosen here by path, not by the route.
 */
function bodyFor(ctx: Context, err: GatewayError): unknown {
  const shape = ctx.state.errorBody;
  if (shape) return shape(err);
  return speaksMessages(ctx.path) ? messageErrorBody(err) : err.toBody();
}

/**
 * Errors of the HTTP stack that carry an http-errors `status` (the body reader maps its own): a
 * client error keeps its status and words; anything else is left to `toGatewayError` (a 500).
 */
function fromHttpError(thrown: unknown): GatewayError | undefined {
  if (thrown instanceof GatewayError || typeof thrown !== 'object' || thrown === null) return undefined;
  const e = thrown as { status?: unknown; message?: string; expose?: unknown; headers?: unknown };
  if (typeof e.status !== 'number' || e.status < 400 || e.status >= 500 || e.expose !== true) return undefined;
  return new GatewayError({
    status: e.status,
    code: 'invalid_request',
    message: echoed(e.message ?? 'The request is invalid.'),
    headers: typeof e.headers === 'object' && e.headers !== null ? (e.headers as Record<string, string>) : undefined,
  });
}
