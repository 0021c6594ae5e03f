import type { Context, Next } from 'koa';
import { GatewayError, toGatewayError } from '../../errors.js';

/**
 * The one place errors become responses. Body-parser and router errors (which carry an
 * http-errors `status`) are mapped to our codes first; anything unknown is a generic 500 whose
 * detail goes only to the log (`ctx.state.error`).
 */
export function errorHandler() {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (thrown) {
      if (isAbortedUpload(thrown)) {
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

/** Routes may shape the error body differently (e.g. `/v1/tools/execute` adds `ok` and `tool`). */
function bodyFor(ctx: Context, err: GatewayError): unknown {
  const shape = ctx.state.errorBody;
  return shape ? shape(err) : err.toBody();
}

/** raw-body's error (under koa-body) when the request closed before its body was all read. */
function isAbortedUpload(thrown: unknown): boolean {
  return typeof thrown === 'object' && thrown !== null && (thrown as { type?: unknown }).type === 'request.aborted';
}

function fromHttpError(thrown: unknown): GatewayError | undefined {
  if (thrown instanceof GatewayError || typeof thrown !== 'object' || thrown === null) return undefined;
  const e = thrown as { status?: number; type?: string; message?: string; code?: unknown };
  if (e.status === 413 || e.type === 'entity.too.large') {
    return new GatewayError({ status: 413, code: 'request_too_large', message: 'Request body is larger than the limit.' });
  }
  // co-body (under koa-body) rethrows JSON.parse's SyntaxError, and its own for a strict-mode
  // scalar, with status 400; body-parser-style parsers say so by type.
  if (e.status === 400 && (e.type === 'entity.parse.failed' || thrown instanceof SyntaxError)) {
    return new GatewayError({ status: 400, code: 'invalid_json', message: 'Request body is not valid JSON.' });
  }
  // `inflation` (under koa-body) throws a bare 415 with this message; raw-body uses the type.
  if (e.type === 'encoding.unsupported' || (e.status === 415 && /^Unsupported Content-Encoding/.test(e.message ?? ''))) {
    return new GatewayError({
      status: 415,
      code: 'unsupported_encoding',
      message: 'Unsupported Content-Encoding; send the body as identity, gzip, deflate or br.',
    });
  }
  if (e.status === 415) {
    return new GatewayError({ status: 415, code: 'unsupported_media_type', message: 'Send the body as application/json.' });
  }
  // zlib failing on a body whose Content-Encoding does not match it (e.g. "gzip" on plain text).
  if (typeof e.code === 'string' && e.code.startsWith('Z_')) {
    return new GatewayError({
      status: 400,
      code: 'invalid_body_encoding',
      message: 'The request body could not be decoded with its Content-Encoding.',
    });
  }
  // Any other client error of the HTTP stack (http-errors marks those `expose`): its own status and words.
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && (thrown as { expose?: unknown }).expose === true) {
    const headers = (thrown as { headers?: unknown }).headers;
    return new GatewayError({
      status: e.status,
      code: 'invalid_request',
      message: e.message ?? 'The request is invalid.',
      headers: typeof headers === 'object' && headers !== null ? (headers as Record<string, string>) : undefined,
    });
  }
  return undefined;
}
