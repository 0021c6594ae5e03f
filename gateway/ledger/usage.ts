/**
 * Usage records: where a wallet's credits went and where they came from. Every billed request
 * writes exactly one (`chat`, `response`, `message`, `tool`, `mcp`) and every credit written to
 * the wallet one (`grant`, `deposit`, `x402`, with its source id). The ledger writes each in the
 * same commit as the step it records (the settle or charge that took the credits, the grant or
 * outside payment that added them), so there is never a record without its step or a step
 * without its record. `UsageHistory` reads them (GET /credits/usage) and sweeps the old ones;
 * a sweep never changes a balance.
 *
 * @example
 *   await ledger.settle(hold, 12, { kind: 'chat', requestId, model, tools: { search: 2 }, promptTokens: 900, completionTokens: 40 })
 *   const page = await usage.page({ wallet, limit: 50 })
 */
import type { UsageRow } from '../storage/usage-rows.js';

export type { UsageRow };

/** Kinds of spending: the request that was billed. `message` is /v1/messages. */
export const SPEND_KINDS = ['chat', 'response', 'message', 'tool', 'mcp'] as const;
export type SpendKind = (typeof SPEND_KINDS)[number];
/** Kinds of crediting: where credits written to the wallet came from. */
export const CREDIT_KINDS = ['grant', 'deposit', 'x402'] as const;
export type CreditKind = (typeof CREDIT_KINDS)[number];
export const USAGE_KINDS = [...SPEND_KINDS, ...CREDIT_KINDS] as const;
export type UsageKind = SpendKind | CreditKind;

/**
 * What a billed request was: known when its charge begins. The API key it came with is not here:
 * it is the payer's (`Payer.key`, the hold's `Reservation.key`, `ChargeOptions.key`), and the
 * ledger writes it as the record's key id.
 */
export interface ChargeOrigin {
  kind: SpendKind;
  /** The HTTP request's id (x-request-id). */
  requestId: string;
  /** The model a chat ran on; null for a tool run. */
  model: string | null;
}

/** What it used: known when it settles. */
export interface UsageDetail {
  /** Tools that ran, name → count. */
  tools: Record<string, number>;
  promptTokens: number;
  completionTokens: number;
}

/** What a settle or charge records beside the credits it took (the record's credits are what it charged). */
export type SpendUsage = ChargeOrigin & UsageDetail;

/** One record, as GET /credits/usage answers it. */
export interface UsageRecord {
  id: string;
  /** ISO 8601, UTC. */
  at: string;
  kind: UsageKind;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  tools: Record<string, number>;
  prompt_tokens: number;
  completion_tokens: number;
  credits: number;
  /** For credits written to the wallet: the grant's idempotency key, the deposit's or the x402 payment's id. */
  source_id: string | null;
}

export interface UsageFilter {
  wallet: string;
  /** ms, inclusive. */
  from?: number;
  /** ms, exclusive. */
  to?: number;
  kind?: UsageKind;
  keyId?: string;
}

/** Where a page ends: the last record's time and its place among records of the same ms. */
export interface UsageCursor {
  at: number;
  seq: number;
}

export interface UsagePage {
  records: UsageRecord[];
  /** Present when more records follow. */
  next?: UsageCursor;
}

export const USAGE_GROUPINGS = ['day', 'model', 'key'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

export interface UsageTotal {
  /** The UTC day (YYYY-MM-DD), the model or the key id; null for records without one (credits, keyless requests). */
  group: string | null;
  records: number;
  /** Credits spent (chat, response, message, tool, mcp). */
  spent: number;
  /** Credits added (grant, deposit, x402). */
  added: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/** Reads a wallet's records, newest first, and sweeps the old ones. Implemented in storage/. */
export interface UsageHistory {
  page(filter: UsageFilter, limit: number, after?: UsageCursor): Promise<UsagePage>;
  /** Totals of every record the filter matches, largest group first for model and key, newest day first. */
  totals(filter: UsageFilter, by: UsageGrouping): Promise<UsageTotal[]>;
  /** Delete every record older than `before` (ms); balances are untouched. Answers how many went. */
  sweep(before: number): Promise<number>;
}

/** The row a spend writes; `keyId`: the API key charged (the hold's or the charge's), if any. */
export function spendRow(id: string, wallet: string, at: number, credits: number, usage: SpendUsage, keyId: string | undefined): UsageRow {
  return {
    id,
    wallet,
    at,
    kind: usage.kind,
    request_id: usage.requestId,
    key_id: keyId ?? null,
    model: usage.model,
    tools: JSON.stringify(usage.tools),
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    credits,
    source_id: null,
  };
}

/** The row a credit writes (key_id null: no key adds credits). */
export function creditRow(id: string, wallet: string, at: number, credits: number, kind: CreditKind, sourceId: string | null): UsageRow {
  return {
    id,
    wallet,
    at,
    kind,
    request_id: null,
    key_id: null,
    model: null,
    tools: '{}',
    prompt_tokens: 0,
    completion_tokens: 0,
    credits,
    source_id: sourceId,
  };
}

const DAY_MS = 86_400_000;
/** How often the retention sweep runs (and once at start). */
const USAGE_SWEEP_INTERVAL_MS = 3_600_000;

/** Sweep records older than `retentionDays` now and every interval; returns the stop. */
export function sweepUsageEvery(history: UsageHistory, retentionDays: number, onError: (err: unknown) => void): () => void {
  const sweep = () => void history.sweep(Date.now() - retentionDays * DAY_MS).catch(onError);
  sweep();
  const timer = setInterval(sweep, USAGE_SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
