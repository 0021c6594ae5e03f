/**
 * The facilitator's HTTP API (x402 v2 specification, "Facilitator"): POST /verify and POST
 * /settle, each with `{x402Version, paymentPayload, paymentRequirements}`, answering a
 * VerifyResponse / SettleResponse; GET /supported, the kinds it settles. What matters here is telling apart a facilitator that never
 * took the payment (down, refused the connection: nothing can have moved) from a settlement whose
 * outcome is unknown (it may have broadcast the transfer before the answer was lost or late).
 *
 * @example
 *   const facilitator = new FacilitatorClient({ url, headers: {}, verifyTimeoutMs: 10_000, settleTimeoutMs: 60_000 })
 *   const outcome = await facilitator.settle(payload, requirements)   // { kind: 'answered', response } | { kind: 'unknown' }
 */
import { FacilitatorUnavailable } from '../errors.js';
import {
  settleResponseSchema,
  supportedResponseSchema,
  verifyResponseSchema,
  X402_VERSION,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from './wire.js';

export interface FacilitatorOptions {
  url: string;
  headers: Record<string, string>;
  verifyTimeoutMs: number;
  settleTimeoutMs: number;
}

export type SettleOutcome = { kind: 'answered'; response: SettleResponse } | { kind: 'unknown'; detail: string };

/** Connection errors that mean the request never reached the facilitator. */
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export class FacilitatorClient {
  private readonly base: string;

  constructor(private readonly options: FacilitatorOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  /** The `scheme network` pairs the facilitator settles for x402 v2 (GET /supported). */
  async supported(): Promise<Set<string>> {
    const response = await fetch(`${this.base}/supported`, {
      headers: { ...this.options.headers, accept: 'application/json' },
      signal: AbortSignal.timeout(this.options.verifyTimeoutMs),
    });
    const parsed = supportedResponseSchema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw new Error(`GET /supported answered ${response.status} without a SupportedResponse`);
    return new Set(parsed.data.kinds.filter((k) => k.x402Version === X402_VERSION).map((k) => `${k.scheme} ${k.network}`));
  }

  /** The facilitator's verdict; FacilitatorUnavailable when it does not give one (verifying moves no money). */
  async verify(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<VerifyResponse> {
    let answer: { status: number; body: unknown };
    try {
      answer = await this.post('/verify', paymentPayload, paymentRequirements, this.options.verifyTimeoutMs);
    } catch (err) {
      throw new FacilitatorUnavailable(`verify: ${describe(err)}`, err);
    }
    const parsed = verifyResponseSchema.safeParse(answer.body);
    if (!parsed.success) throw new FacilitatorUnavailable(`verify answered ${answer.status} without a VerifyResponse`);
    return parsed.data;
  }

  /**
   * The settlement's answer; FacilitatorUnavailable when the request certainly never arrived;
   * `unknown` when it may have (a timeout, a dropped connection, an answer that is not a
   * SettleResponse): the payment may settle without us hearing of it.
   */
  async settle(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<SettleOutcome> {
    let answer: { status: number; body: unknown };
    try {
      answer = await this.post('/settle', paymentPayload, paymentRequirements, this.options.settleTimeoutMs);
    } catch (err) {
      if (NOT_DELIVERED.has(errorCode(err) ?? '')) throw new FacilitatorUnavailable(`settle: ${describe(err)}`, err);
      return { kind: 'unknown', detail: describe(err) };
    }
    const parsed = settleResponseSchema.safeParse(answer.body);
    if (!parsed.success) return { kind: 'unknown', detail: `settle answered ${answer.status} without a SettleResponse` };
    return { kind: 'answered', response: parsed.data };
  }

  private async post(
    path: string,
    paymentPayload: PaymentPayload,
    paymentRequirements: PaymentRequirements,
    timeoutMs: number,
  ): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: { ...this.options.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ x402Version: X402_VERSION, paymentPayload, paymentRequirements }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  }
}

function errorCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

function describe(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'timed out';
  return errorCode(err) ?? (err instanceof Error ? err.message : String(err));
}
