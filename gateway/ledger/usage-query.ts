/**
 * A wallet's usage records as `GET /credits/usage`, `GET /admin/credits/:address/usage` and
 * `npm run credits -- usage` answer them: the query (filters, paging, `group_by`) checked with
 * zod, then a page newest first with a cursor, or totals per day, model or key for the whole
 * filtered window. (The answer's OpenAPI schemas are http/openapi/usage-schemas.ts.)
 *
 * @example
 *   ctx.body = await usageAnswer(history, wallet, ctx.query)
 */
import { z } from 'zod';
import { invalidRequestFrom, InvalidRequest } from '../errors.js';
import {
  USAGE_GROUPINGS,
  USAGE_KINDS,
  type UsageCursor,
  type UsageFilter,
  type UsageGrouping,
  type UsageHistory,
  type UsagePage,
  type UsageRecord,
  type UsageTotal,
} from './usage.js';

export const MAX_USAGE_PAGE = 200;

const instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .meta({ description: 'ISO 8601: a date (UTC midnight) or a date-time with its offset' });

export const usageQuerySchema = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_USAGE_PAGE)
      .default(50)
      .meta({ description: `Records per page (1–${MAX_USAGE_PAGE})` }),
    cursor: z
      .string()
      .regex(/^[0-9]{1,16}\.[0-9]{1,16}$/, 'a next_cursor from an earlier page')
      .optional()
      .meta({ description: 'The previous page’s next_cursor (not with group_by)' }),
    from: instant.optional().meta({ description: 'Records at or after this instant (ISO 8601)' }),
    to: instant.optional().meta({ description: 'Records before this instant (ISO 8601)' }),
    kind: z.enum(USAGE_KINDS).optional().meta({ description: 'Only records of this kind' }),
    key_id: z.string().min(1).max(200).optional().meta({ description: 'Only records of requests made with this API key' }),
    group_by: z
      .enum(USAGE_GROUPINGS)
      .optional()
      .meta({ description: 'Totals per UTC day, model or key for the filtered window, instead of records' }),
  })
  .strict();

export type UsageAnswer =
  | { object: 'list'; data: UsageRecord[]; has_more: boolean; next_cursor: string | null }
  | { object: 'usage_totals'; group_by: UsageGrouping; data: UsageTotal[] };

/**
 * The answer for `wallet`'s records under `query`. `onlyKey`: the records of that key alone,
 * whatever key_id the query names (a key that may see only its own).
 */
export async function usageAnswer(history: UsageHistory, wallet: string, query: unknown, onlyKey?: string): Promise<UsageAnswer> {
  const parsed = usageQuerySchema.safeParse(query);
  if (!parsed.success) throw invalidRequestFrom(parsed.error);
  const { limit, cursor, from, to, kind, key_id: keyId, group_by: groupBy } = parsed.data;
  const filter: UsageFilter = {
    wallet,
    ...(from !== undefined ? { from: Date.parse(from) } : {}),
    ...(to !== undefined ? { to: Date.parse(to) } : {}),
    ...(kind !== undefined ? { kind } : {}),
    ...(keyId !== undefined ? { keyId } : {}),
  };
  if (groupBy && cursor !== undefined)
    throw new InvalidRequest('group_by answers totals for the whole window: it takes no cursor.', 'cursor');
  // A key confined to its own records sees another key's as none.
  const elsewhere = onlyKey !== undefined && keyId !== undefined && keyId !== onlyKey;
  if (onlyKey !== undefined) filter.keyId = onlyKey;
  if (groupBy) {
    const totals = elsewhere ? [] : await history.totals(filter, groupBy);
    return {
      object: 'usage_totals',
      group_by: groupBy,
      data: totals.map((total) => ({
        group: total.group,
        records: Number(total.records),
        spent: Number(total.spent),
        added: Number(total.added),
        prompt_tokens: Number(total.prompt_tokens),
        completion_tokens: Number(total.completion_tokens),
      })),
    };
  }
  const after = cursor === undefined ? undefined : parseCursor(cursor);
  const page: UsagePage = elsewhere ? { records: [] } : await history.page(filter, limit, after);
  return {
    object: 'list',
    data: page.records,
    has_more: page.next !== undefined,
    next_cursor: page.next ? `${page.next.at}.${page.next.seq}` : null,
  };
}

function parseCursor(cursor: string): UsageCursor {
  const [at, seq] = cursor.split('.').map(Number);
  if (!Number.isSafeInteger(at) || !Number.isSafeInteger(seq))
    throw new InvalidRequest('cursor must be a next_cursor from an earlier page.', 'cursor');
  return { at, seq };
}
