/** The stored shape of an API key record, checked wherever a key store reads one back. */
import { z } from 'zod';
import type { ApiKeyRecord } from './types.js';

export const apiKeyRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  address: z.string(),
  created_at: z.number().int(),
  last_used_at: z.number().int().nullable(),
  verified: z.boolean(),
  prefix: z.string(),
}) satisfies z.ZodType<ApiKeyRecord>;
