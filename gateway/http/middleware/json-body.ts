import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';

/** Bodies are JSON: application/json or any +json type. */
const JSON_TYPES = ['json', '+json'];

/**
 * Read a JSON request body of at most `limitBytes` into `ctx.request.body`. Routes put it last in
 * their guard chain, so a body is read only once the caller is known, and parse failures
 * (invalid_json, request_too_large) get the route's own error shape. A body of another type is
 * 415: koa-body would skip it and the route would then see "no fields" (a text/plain grant would
 * fail as "address: expected string").
 *
 * @example
 *   router.post('/v1/chat/completions', requireWallet(), jsonBody(4 * 1024 * 1024), handler)
 */
export function jsonBody(limitBytes: number): Middleware {
  const parse = koaBody({
    json: true,
    jsonTypes: JSON_TYPES,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonStrict: true,
    jsonLimit: limitBytes,
    onError: (err) => {
      throw err;
    },
  });
  return function readJsonBody(ctx, next) {
    const hasBody = Number(ctx.get('content-length')) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && !ctx.is(JSON_TYPES)) ctx.throw(415);
    return parse(ctx, next);
  };
}
