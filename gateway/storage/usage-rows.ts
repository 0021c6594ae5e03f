/**
 * A usage record as both stores keep it: the ledgers write these rows (ledger/usage.ts builds
 * them), the usage histories read them back as the API answers them.
 */
import type { CreditKind, UsageKind, UsageRecord } from '../ledger/usage.js';

/** A row as both stores keep it (the ledgers write it, the histories read it). */
export interface UsageRow {
  id: string;
  wallet: string;
  /** ms since the epoch. */
  at: number;
  kind: UsageKind;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  /** JSON object, name → count. */
  tools: string;
  prompt_tokens: number;
  completion_tokens: number;
  credits: number;
  source_id: string | null;
}

/**
 * The kinds that add credits (every key: a new credit kind must be named here to count as added).
 * ledger/usage.ts CREDIT_KINDS says the same as a value, which storage/ may not import (import rules):
 * the Record type ties this copy to it.
 */
const CREDITING: Record<CreditKind, true> = { grant: true, deposit: true, x402: true };
export const CREDITING_KINDS = Object.keys(CREDITING) as CreditKind[];

/** A stored row as the API answers it. */
export function usageRecordFromRow(row: Omit<UsageRow, 'wallet'>): UsageRecord {
  return {
    id: row.id,
    at: new Date(Number(row.at)).toISOString(),
    kind: row.kind,
    request_id: row.request_id,
    key_id: row.key_id,
    model: row.model,
    tools: JSON.parse(row.tools) as Record<string, number>,
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    credits: Number(row.credits),
    source_id: row.source_id,
  };
}
