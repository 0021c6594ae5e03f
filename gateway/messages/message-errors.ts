/**
 * Errors in the Anthropic Messages format: `{"type": "error", "error": {"type", "message"}}`, the
 * type chosen by the HTTP status (https://docs.claude.com/en/api/errors), the status unchanged and
 * the gateway's own `code` leading the message so nothing of it is lost. Every error answered on
 * `/v1/messages*` takes this shape, whichever layer raised it (http/middleware/error-handler.ts
 * picks it by path), and so does the `error` event of a stream that already began.
 *
 * @example
 *   messageErrorBody(new RateLimited('Slow down.', 3))
 *   // { type: 'error', error: { type: 'rate_limit_error', message: 'rate_limited: Slow down.' } }
 */
import type { GatewayError } from '../errors.js';

/** The Messages API's error types, by the statuses it documents. */
export type MessageErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error'
  | 'timeout_error';

/** The Messages API's path: it and every path under it answer errors in this format. */
export const MESSAGES_PATH = '/v1/messages';

/**
 * Whether a request path is the Messages API's: the route and what lies under it (count_tokens,
 * and paths nobody serves there), in any case and percent-encoding, as the router matches them.
 */
export function speaksMessages(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // not decodable: as sent
  }
  const lower = decoded.toLowerCase();
  return lower === MESSAGES_PATH || lower.startsWith(`${MESSAGES_PATH}/`);
}

/** The error type of a status: any other 4xx is invalid_request_error (as Anthropic's page says), any other 5xx api_error. */
export function messageErrorType(status: number): MessageErrorType {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
  }
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

export interface MessageErrorBody {
  type: 'error';
  error: { type: MessageErrorType; message: string };
}

export function messageErrorBody(err: GatewayError): MessageErrorBody {
  return { type: 'error', error: { type: messageErrorType(err.status), message: `${err.code}: ${err.message}` } };
}
