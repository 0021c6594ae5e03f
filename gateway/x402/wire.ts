/**
 * The x402 protocol version 2 wire format, as this gateway speaks it: the three HTTP headers
 * (base64 of JSON), the PaymentRequired offer, the client's PaymentPayload for the `exact` scheme
 * on EVM (an EIP-3009 transferWithAuthorization signature), and the facilitator's verify/settle
 * answers. Everything a client or facilitator sends is parsed with these schemas before use.
 *
 * Specification (coinbase/x402): specs/x402-specification-v2.md (PaymentRequired,
 * PaymentRequirements, PaymentPayload, VerifyResponse, SettleResponse; facilitator POST /verify,
 * POST /settle, GET /supported), specs/transports-v2/http.md (PAYMENT-REQUIRED on the 402,
 * PAYMENT-SIGNATURE on the retry, PAYMENT-RESPONSE on the answer, each base64-encoded JSON) and
 * specs/schemes/exact/scheme_exact_evm.md (the EIP-3009 payload and `extra: {name, version}`).
 *
 * @example
 *   ctx.set(PAYMENT_REQUIRED_HEADER, encodeHeader(paymentRequired))
 *   const payload = paymentPayloadSchema.safeParse(decodeHeader(ctx.get(PAYMENT_SIGNATURE_HEADER)))
 */
import { z } from 'zod';

export const X402_VERSION = 2;
export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';
export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an 0x address of 40 hex digits');
const atomicAmount = z.string().regex(/^[1-9][0-9]{0,76}$/, 'a positive whole number of atomic units');
const uintString = z.string().regex(/^[0-9]{1,78}$/, 'a whole number');

/** One way to pay (PaymentRequirements): what the resource server offers and the client picks. */
export const paymentRequirementsSchema = z.object({
  scheme: z.string(),
  network: z.string(),
  amount: atomicAmount,
  asset: z.string(),
  payTo: z.string(),
  maxTimeoutSeconds: z.number().int().positive(),
  extra: z.record(z.string(), z.unknown()),
});
export type PaymentRequirements = z.infer<typeof paymentRequirementsSchema>;

export interface ResourceInfo {
  url: string;
  description?: string;
  mimeType?: string;
}

/** The PAYMENT-REQUIRED header's content. */
export interface PaymentRequired {
  x402Version: typeof X402_VERSION;
  /** Why the previous payment (if any) was refused. */
  error?: string;
  resource: ResourceInfo;
  accepts: PaymentRequirements[];
}

/** The `exact` scheme's EVM payload: an EIP-3009 authorization and its signature. */
const exactEvmPayloadSchema = z.object({
  signature: z.string().regex(/^0x([0-9a-fA-F]{2})+$/, 'a hex signature'),
  authorization: z.object({
    from: address,
    to: address,
    value: atomicAmount,
    validAfter: uintString,
    validBefore: uintString,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 32-byte hex nonce'),
  }),
});
export type ExactEvmPayload = z.infer<typeof exactEvmPayloadSchema>;

/** The PAYMENT-SIGNATURE header's content, version 2, `exact` on EVM. */
export const paymentPayloadSchema = z.object({
  x402Version: z.literal(X402_VERSION),
  resource: z.object({ url: z.string() }).loose().optional(),
  accepted: paymentRequirementsSchema,
  payload: exactEvmPayloadSchema,
  extensions: z.record(z.string(), z.unknown()).optional(),
});
export type PaymentPayload = z.infer<typeof paymentPayloadSchema>;

/** POST /verify's answer. */
export const verifyResponseSchema = z.object({
  isValid: z.boolean(),
  invalidReason: z.string().optional(),
  invalidMessage: z.string().optional(),
  payer: z.string().optional(),
});
export type VerifyResponse = z.infer<typeof verifyResponseSchema>;

/** POST /settle's answer, and (as the gateway saw it) the PAYMENT-RESPONSE header's content. */
export const settleResponseSchema = z.object({
  success: z.boolean(),
  errorReason: z.string().optional(),
  errorMessage: z.string().optional(),
  payer: z.string().optional(),
  transaction: z.string(),
  network: z.string(),
});
export type SettleResponse = z.infer<typeof settleResponseSchema>;

/** GET /supported's answer: the (version, scheme, network) kinds the facilitator settles. */
export const supportedResponseSchema = z.object({
  kinds: z.array(z.object({ x402Version: z.number(), scheme: z.string(), network: z.string() }).loose()),
});

/** Base64 of the JSON text (UTF-8), as the HTTP transport puts every x402 object in a header. */
export function encodeHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** The JSON inside a base64 header value; undefined when it is not base64 of JSON. */
export function decodeHeader(value: string): unknown {
  const text = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  try {
    return JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
}
