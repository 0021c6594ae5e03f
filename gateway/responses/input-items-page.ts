/**
 * `GET /v1/responses/{id}/input_items`: a stored response's input items, a page at a time, as the
 * Responses API lists them (`object: "list"`, `data`, `first_id`, `last_id`, `has_more`; query
 * `limit` 1–100, default 20, `order` `asc` or `desc`, default `desc`, `after` an item id; `include`
 * is accepted and ignored). https://platform.openai.com/docs/api-reference/responses/input-items
 *
 * @example
 *   inputItemsPage(stored.input, parseInputItemsQuery({ order: 'asc', limit: '2' }))
 *   // { object: 'list', data: [first, second], first_id: 'msg_…', last_id: 'msg_…', has_more: true }
 */
import { z } from 'zod';
import { InvalidRequest, invalidRequestFrom } from '../errors.js';

/** The query as validated (exported for the OpenAPI document). */
export const inputItemsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Items per page, 1–100 (default 20)' }),
  order: z.enum(['asc', 'desc']).default('desc').meta({ description: '`asc`: oldest first; `desc` (default): newest first' }),
  after: z.string().min(1).optional().meta({ description: 'An item id: the page starts after it' }),
  include: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .meta({ description: 'Accepted and ignored' }),
});

export type InputItemsQuery = z.infer<typeof inputItemsQuerySchema>;

export function parseInputItemsQuery(query: unknown): InputItemsQuery {
  const parsed = inputItemsQuerySchema.safeParse(query);
  if (!parsed.success) throw invalidRequestFrom(parsed.error, { prefix: 'Invalid query: ' });
  return parsed.data;
}

export function inputItemsPage(items: Array<Record<string, unknown>>, query: InputItemsQuery): Record<string, unknown> {
  const ordered = query.order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = ordered.findIndex((item) => item.id === query.after);
    if (at === -1) throw new InvalidRequest(`after: the response has no input item '${query.after}'.`, 'after');
    start = at + 1;
  }
  const data = ordered.slice(start, start + query.limit);
  return {
    object: 'list',
    data,
    first_id: data.length ? data[0].id : null,
    last_id: data.length ? data[data.length - 1].id : null,
    has_more: start + data.length < ordered.length,
  };
}
