import type { Context, Next } from 'koa';
import { GatewayError, InvalidRequest } from '../../errors.js';

/** Node's own test of an Expect it meets (`continueExpression` in its HTTP server). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * The two HTTP/1.1 rules Node's server would enforce itself with a bare status and no body, here in
 * the gateway's error shape (server.ts turns Node's own checks off and hands these requests on):
 * an `Expect` other than `100-continue` is 417 (RFC 9110 §10.1.1; Node answers 100-continue
 * itself), and an HTTP/1.1 request without `Host` is 400 (RFC 9112 §3.2). Not `async`: it only
 * checks and hands on.
 *
 * @example
 *   app.use(httpRequirements()) // after the error handler, before any budget
 */
export function httpRequirements() {
  return function checkHttpRequirements(ctx: Context, next: Next): Promise<void> {
    const http11 = ctx.req.httpVersion === '1.1';
    const expect = ctx.get('expect');
    // HTTP/1.0 expectations are ignored (RFC 9110 §10.1.1), as Node does.
    if (http11 && expect !== '' && !CONTINUE.test(expect)) {
      throw new GatewayError({
        status: 417,
        code: 'expectation_failed',
        param: 'Expect',
        message: 'The gateway meets no Expect but 100-continue; send the request without it.',
      });
    }
    if (http11 && ctx.req.headers.host === undefined) {
      throw new InvalidRequest('An HTTP/1.1 request needs a Host header.', 'Host');
    }
    return next();
  };
}
