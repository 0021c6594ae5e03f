/**
 * Upstream messages read back from a store (kept rounds, stored responses), checked like any other
 * input before the model sees them: the shapes of `UpstreamMessage` (chat-types.ts) as zod schemas.
 *
 * @example
 *   const conversation = z.array(upstreamMessageSchema).parse(JSON.parse(stored))
 */
import { z } from 'zod';

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

export const assistantMessageSchema = z.object({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  tool_calls: z.array(toolCall).optional(),
});

export const toolMessageSchema = z.object({ role: z.literal('tool'), content: z.string(), tool_call_id: z.string() });

export const upstreamMessageSchema = z.union([
  z.object({ role: z.enum(['system', 'user']), content: z.string() }),
  assistantMessageSchema,
  toolMessageSchema,
]);
