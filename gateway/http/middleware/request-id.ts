import { randomUUID } from 'node:crypto';

/** A client's id is kept only if it is short and plain enough to log and echo safely. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The id a request is known by in logs and in the `x-request-id` response header: the client's
 * `x-request-id` when it is at most 64 characters of `[A-Za-z0-9._-]`, otherwise a fresh UUID.
 *
 * @example
 *   requestIdFrom('trace-42')        // 'trace-42'
 *   requestIdFrom('a b')             // a fresh UUID such as '5b0c…'
 */
export function requestIdFrom(clientValue: string | undefined): string {
  return clientValue !== undefined && ACCEPTABLE_REQUEST_ID.test(clientValue) ? clientValue : randomUUID();
}
