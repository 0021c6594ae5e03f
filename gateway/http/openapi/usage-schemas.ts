/**
 * The OpenAPI schemas of the usage answers (ledger/usage-query.ts builds them): a page of records,
 * or totals. GET /credits/usage and GET /admin/credits/:address/usage document their answers with these.
 */
import { z } from 'zod';
import { USAGE_GROUPINGS, USAGE_KINDS } from '../../ledger/usage.js';

export const usageRecordSchema = z.object({
  id: z.string(),
  at: z.string().meta({ description: 'ISO 8601, UTC' }),
  kind: z
    .enum(USAGE_KINDS)
    .meta({ description: 'What was billed (chat, response, message, tool, mcp) or credited (grant, deposit, x402)' }),
  request_id: z.string().nullable().meta({ description: 'The billed request’s x-request-id; null for credits' }),
  key_id: z.string().nullable().meta({ description: 'The API key the request came with; null without one, and for credits' }),
  model: z.string().nullable(),
  tools: z.record(z.string(), z.number().int()).meta({ description: 'Tools that ran, name → count' }),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  credits: z.number().int().meta({ description: 'Credits spent (billed kinds) or added (credit kinds)' }),
  source_id: z
    .string()
    .nullable()
    .meta({ description: 'A credit’s source: the grant’s idempotency key, the deposit’s or x402 payment’s id' }),
});

export const usageListSchema = z.object({
  object: z.literal('list'),
  data: z.array(usageRecordSchema).meta({ description: 'Newest first' }),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});

export const usageTotalsSchema = z.object({
  object: z.literal('usage_totals'),
  group_by: z.enum(USAGE_GROUPINGS),
  data: z.array(
    z.object({
      group: z.string().nullable().meta({ description: 'The UTC day (YYYY-MM-DD), model or key id; null for records without one' }),
      records: z.number().int(),
      spent: z.number().int(),
      added: z.number().int(),
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int(),
    }),
  ),
});
