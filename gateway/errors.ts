/**
 * One typed error family for the whole gateway. Every error that reaches a client is a
 * GatewayError (or becomes a generic 500), and the error middleware turns it into the OpenAI
 * error body `{error:{message, type, code, param}}`.
 *
 * @example
 *   throw new GatewayError({ status: 404, code: 'model_not_found', message: 'Unknown model "x"' })
 */
import type { ZodError, ZodType, output } from 'zod';

/** The OpenAI error `type` values we use, chosen by status class. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_credits_error'
  | 'upstream_error'
  | 'server_error';

export interface GatewayErrorOptions {
  status: number;
  code: string;
  message: string;
  type?: ErrorType;
  param?: string | null;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  /** Internal detail for the log only; never sent to the client. */
  details?: string;
  cause?: unknown;
}

function typeForStatus(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'insufficient_credits_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 502 || status === 503 || status === 504) return 'upstream_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export class GatewayError extends Error {
  readonly status: number;
  readonly code: string;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  readonly details?: string;

  constructor(options: GatewayErrorOptions) {
    super(options.message, { cause: options.cause });
    this.name = 'GatewayError';
    this.status = options.status;
    this.code = options.code;
    this.type = options.type ?? typeForStatus(options.status);
    this.param = options.param == null ? null : echoed(options.param);
    this.headers = options.headers ?? {};
    this.details = options.details;
  }

  /** The OpenAI-shaped body sent to clients. */
  toBody(): { error: { message: string; type: ErrorType; code: string; param: string | null } } {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

/** The most of a client's own value an error message repeats (a name, an id, a path). */
export const ECHO_MAX_CHARS = 200;

/**
 * A value as an error message repeats it: cut to `max` characters with an ellipsis, so a 1 MB
 * model name makes a short error, not a 1 MB one. Every message that echoes what it was sent (and
 * every `param`, which may name a client's key) goes through here.
 *
 * @example
 *   new NotFound(`The model "${echoed(name)}" does not exist.`) // "mmm…" after 200 characters
 */
export function echoed(value: string, max = ECHO_MAX_CHARS): string {
  if (value.length <= max) return value;
  // Never split a surrogate pair: half of one is not a character.
  const end = /[\uD800-\uDBFF]/.test(value[max - 1]) ? max - 1 : max;
  return `${value.slice(0, end)}…`;
}

/** 400 for input that fails validation; `param` names the offending field. */
export class InvalidRequest extends GatewayError {
  constructor(message: string, param: string | null = null, code = 'invalid_request') {
    super({ status: 400, code, message, param });
  }
}

export class NotFound extends GatewayError {
  constructor(message: string, code = 'not_found', param: string | null = null) {
    super({ status: 404, code, message, param });
  }
}

/** 405 method_not_allowed: the route (or the gateway) serves no such method. */
export class MethodNotAllowed extends GatewayError {
  constructor() {
    super({ status: 405, code: 'method_not_allowed', message: 'Method not allowed for this route.' });
  }
}

export class RateLimited extends GatewayError {
  constructor(message: string, retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super({ status: 429, code: 'rate_limited', message, headers: { 'Retry-After': String(seconds) } });
  }
}

export class InsufficientCredits extends GatewayError {
  /** The spendable balance when the hold was refused, and the hold asked for (an x402 offer covers the gap). */
  readonly balance: number;
  readonly needed: number;

  constructor(balance: number, needed: number, headers?: Record<string, string>) {
    super({
      status: 402,
      code: 'insufficient_credits',
      message: `Insufficient credits: balance is ${balance}, this request needs at least ${needed}.`,
      headers,
    });
    this.balance = balance;
    this.needed = needed;
  }
}

/**
 * 402 key_budget_exhausted: the API key's own cap (lifetime or today's) is spent. Not an
 * insufficient-credits refusal: the wallet may still hold credits, so no x402 offer goes with it.
 */
export class KeyBudgetExhausted extends GatewayError {
  /** What the key may still spend, and what was asked for. */
  readonly remaining: number;
  readonly needed: number;

  constructor(remaining: number, needed: number) {
    super({
      status: 402,
      code: 'key_budget_exhausted',
      message:
        `This API key's credit limit is reached: it may spend ${remaining} more, this request needs at least ${needed}. ` +
        "The wallet may still hold credits: use another key or raise this key's limit.",
    });
    this.remaining = remaining;
    this.needed = needed;
  }
}

/** 401 api_key_expired: the key's expires_at has passed. */
export class ApiKeyExpired extends GatewayError {
  constructor() {
    super({ status: 401, code: 'api_key_expired', message: 'This API key has expired (its expires_at has passed); create a new key.' });
  }
}

/**
 * 402 payment_invalid: an x402 payment was refused before any money moved (malformed, not what
 * was offered, the payer is not the wallet, reused, or refused by the facilitator); `headers`
 * carries a fresh offer.
 */
export class PaymentInvalid extends GatewayError {
  /** The reason, short and stable (e.g. `payer_mismatch`), also sent as the offer's `error`. */
  readonly reason: string;

  constructor(reason: string, message: string, headers?: Record<string, string>) {
    super({
      status: 402,
      code: 'payment_invalid',
      param: 'PAYMENT-SIGNATURE',
      message: `Payment refused (${reason}): ${message}`,
      headers,
    });
    this.reason = reason;
  }
}

/** 503 facilitator_unavailable: the x402 facilitator did not answer; nothing was settled or credited. */
export class FacilitatorUnavailable extends GatewayError {
  constructor(what: string, cause?: unknown) {
    super({
      status: 503,
      code: 'facilitator_unavailable',
      type: 'server_error',
      message: `The payment facilitator is unavailable (${what}); nothing was charged or credited. Retry shortly.`,
      headers: { 'Retry-After': '5' },
      cause,
    });
  }
}

/** 503 chain_unavailable: the chain's RPC did not answer a read a payment needs; nothing was claimed, charged or credited. */
export class ChainUnavailable extends GatewayError {
  constructor(network: string) {
    super({
      status: 503,
      code: 'chain_unavailable',
      type: 'server_error',
      message: `The RPC of ${network} did not answer; the payment was not taken and nothing was charged or credited. Retry shortly.`,
      headers: { 'Retry-After': '5' },
    });
  }
}

/**
 * 503 payment_pending: the payment was sent for settlement but its outcome is not known yet. It is
 * recorded and reconciled from the chain; retrying with the same payment credits it at most once.
 */
export class PaymentPending extends GatewayError {
  constructor(retryAfterSeconds: number) {
    super({
      status: 503,
      code: 'payment_pending',
      type: 'server_error',
      message:
        'The payment was submitted for settlement and its outcome is not known yet; it will be credited once it settles. ' +
        'Retry this request with the same PAYMENT-SIGNATURE after Retry-After.',
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

/** 409 reservation_closed: the hold was already settled, released or expired (the ledger contract). */
export class ReservationClosed extends GatewayError {
  constructor(id: string) {
    super({ status: 409, code: 'reservation_closed', message: `Reservation ${id} was already settled, released or expired.` });
  }
}

/** 400 ledger_total_too_large: the grant would take the wallet's totals past exact integers. */
export class LedgerTotalTooLarge extends GatewayError {
  constructor(totalDeposited: number, amount: number) {
    super({
      status: 400,
      code: 'ledger_total_too_large',
      param: 'amount',
      message: `This grant would take the wallet's total_deposited (${totalDeposited}) past ${Number.MAX_SAFE_INTEGER}, the largest exact count.`,
    });
  }
}

/** 409 idempotency_key_reused: the same Idempotency-Key names a different grant. */
export class IdempotencyConflict extends GatewayError {
  constructor() {
    super({
      status: 409,
      code: 'idempotency_key_reused',
      param: 'Idempotency-Key',
      message: 'This Idempotency-Key was already used for a different grant.',
    });
  }
}

/** 409 external_credit_conflict: an outside payment's id was already credited with other terms (wallet, units, rate). */
export class ExternalCreditConflict extends GatewayError {
  constructor(source: string, externalId: string) {
    super({
      status: 409,
      code: 'external_credit_conflict',
      message: `The ${source} payment ${externalId} was already credited with a different wallet, amount or rate.`,
    });
  }
}

/** 409 too_many_api_keys: the wallet holds MAX_KEYS_PER_WALLET keys; revoke one first. */
export class TooManyApiKeys extends GatewayError {
  constructor(max: number) {
    super({
      status: 409,
      code: 'too_many_api_keys',
      message: `This wallet already has ${max} API keys; revoke one (DELETE /auth/api-keys/:id) before creating another.`,
    });
  }
}

/**
 * 503 store_unavailable: a store this request needs (PostgreSQL, Redis) cannot be reached. The
 * request changed nothing it could not undo; retrying later is safe.
 */
export class StoreUnavailable extends GatewayError {
  /** Which store: "PostgreSQL" or "Redis". */
  readonly store: string;

  constructor(store: string, cause?: unknown, message = `${store} is unavailable; retry shortly.`) {
    super({ status: 503, code: 'store_unavailable', type: 'server_error', message, cause, headers: { 'Retry-After': '1' } });
    this.store = store;
  }
}

export class Unauthorized extends GatewayError {
  constructor(code: string, message: string) {
    super({ status: 401, code, message });
  }
}

export class Forbidden extends GatewayError {
  constructor(code: string, message: string) {
    super({ status: 403, code, message });
  }
}

/**
 * The first issue of a failed zod parse as a parameter name and a message naming it: the one way
 * a validation failure is worded. `param` is the issue's path (or, with `unknownKeyAsParam`, the
 * unknown key a strict object refused).
 *
 * @example
 *   const { param, message } = zodIssue(parsed.error) // { param: 'amount', message: 'amount: must be positive' }
 */
export function zodIssue(error: ZodError, options: { unknownKeyAsParam?: boolean } = {}): { param: string | null; message: string } {
  const issue = error.issues[0];
  const unknownKey = options.unknownKeyAsParam && issue.code === 'unrecognized_keys' ? issue.keys[0] : null;
  // Paths and unknown keys are the client's own names: cut like any echo.
  const param = echoed(issue.path.map(String).join('.')) || (unknownKey === null ? null : echoed(unknownKey));
  const message = echoed(issue.message);
  return { param, message: param ? `${param}: ${message}` : message };
}

/** 400 invalid_request from a failed zod parse; `unnamed` leads the message when no field is named. */
export function invalidRequestFrom(error: ZodError, options: { prefix?: string; unnamed?: string } = {}): InvalidRequest {
  const { param, message } = zodIssue(error);
  return new InvalidRequest(`${options.prefix ?? ''}${param ? '' : (options.unnamed ?? '')}${message}`, param);
}

/** 400 invalid_request for one part of a body (an input item, a content block, a tool) at `at`: the field is named under it. */
export function invalidRequestAt(error: ZodError, at: string): InvalidRequest {
  const { param, message } = zodIssue(error);
  return new InvalidRequest(`Invalid request: ${at}.${message}`, param ? `${at}.${param}` : at);
}

/** One part of a body against its own schema; a failure is `invalidRequestAt`. */
export function parseAt<T extends ZodType>(schema: T, value: unknown, at: string): output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw invalidRequestAt(parsed.error, at);
}

/** Turn anything thrown into a GatewayError; unknown errors become a generic 500. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError({
    status: 500,
    code: 'internal_error',
    message: 'The server had an error while processing your request.',
    details: err instanceof Error ? (err.stack ?? err.message) : String(err),
    cause: err,
  });
}
