import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { guardedFetch, type ConnectFn } from '../extract/guarded-fetch.js';
import { isReadableType, toReadable } from '../extract/readable.js';
import type { LookupFn } from '../extract/ssrf-guard.js';

export const webExtractInput = z.object({
  url: z.string().trim().min(1).max(4096).describe('The http or https URL of the page to read'),
  max_chars: z
    .number()
    .int()
    .min(200)
    .max(200_000)
    .default(20_000)
    .describe('Longest content to return; longer content is cut with a marker'),
});

export const webExtractOutput = z.object({
  url: z.string(),
  final_url: z.string().describe('The URL after redirects'),
  title: z.string(),
  byline: z.string().optional(),
  site_name: z.string().optional(),
  content: z.string().describe('The readable article as Markdown (plain text and JSON as served)'),
  length: z.number().int().describe('Characters of the full content before any truncation'),
  truncated: z.boolean(),
});

export interface WebExtractOptions {
  allow: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  /** Test seams: DNS resolution and socket opening. */
  lookup?: LookupFn;
  connect?: ConnectFn;
}

/**
 * `web_extract`: fetch a page through the SSRF guard and return its readable content.
 *
 * @example
 *   webExtractTool({ allow: [], maxBytes: 5 * 1024 * 1024, timeoutMs: 15000 })
 */
export function webExtractTool(options: WebExtractOptions) {
  return defineTool({
    name: 'web_extract',
    description:
      'Read a web page and return its main content as Markdown (navigation, ads and comments removed). Plain text and JSON are returned as served.',
    input: webExtractInput,
    output: webExtractOutput,
    async run({ url, max_chars }, { signal }) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new ToolError('invalid_arguments', 'url: not a valid absolute URL', { param: 'url' });
      }
      const page = await guardedFetch(parsed, { ...options, signal });
      if (page.status === 404 || page.status === 410)
        throw new ToolError('not_found', `The page answered HTTP ${page.status}.`, { param: 'url' });
      if (page.status < 200 || page.status >= 300) throw new ToolError('upstream_unavailable', `The page answered HTTP ${page.status}.`);
      if (!isReadableType(page.contentType)) {
        throw new ToolError('invalid_arguments', `The URL serves ${page.contentType.split(';')[0]}, which cannot be read as text.`, {
          param: 'url',
        });
      }
      const readable = toReadable(page.text, page.contentType, page.finalUrl);
      const length = readable.content.length;
      const truncated = length > max_chars;
      const content = truncated
        ? `${readable.content.slice(0, max_chars)}\n\n[… truncated: ${max_chars} of ${length} characters shown]`
        : readable.content;
      return { url: parsed.href, final_url: page.finalUrl, ...readable, content, length, truncated };
    },
  });
}
