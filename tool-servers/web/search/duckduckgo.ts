import { parseHTML } from 'linkedom';
import { httpRequest, HttpStatusError } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import type { SearchProvider, SearchHit } from './types.js';

// The HTML endpoint serves a reduced page (or a challenge) to clients that do not look like a browser.
const BROWSER_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/**
 * DuckDuckGo's keyless HTML endpoint (`GET /html/?q=`), parsed from the result page:
 * `a.result__a` carries a redirect link whose `uddg` parameter is the target, `.result__snippet`
 * the snippet. Ads (`.result--ad`) are skipped.
 *
 * @example
 *   const ddg = createDuckDuckGoSearch({ baseUrl: 'https://html.duckduckgo.com', http })
 */
export function createDuckDuckGoSearch(options: { baseUrl: string; http: ProviderHttp }): SearchProvider {
  return {
    name: 'duckduckgo',
    available: true,
    async run(signal, { query, count }): Promise<SearchHit[]> {
      const url = new URL(`${options.baseUrl}/html/`);
      url.searchParams.set('q', query);
      const response = await httpRequest(url, {
        headers: { 'user-agent': BROWSER_USER_AGENT, accept: 'text/html' },
        signal,
        ...options.http,
      });
      // 202 is DuckDuckGo's "anomaly" (bot challenge) page: no results in it.
      if (response.status !== 200) throw new HttpStatusError(response.status, response.text);
      return parseDuckDuckGoHtml(response.text).slice(0, count);
    },
  };
}

/** Extract organic results from a DuckDuckGo HTML result page. */
export function parseDuckDuckGoHtml(html: string): SearchHit[] {
  const { document } = parseHTML(html);
  const hits: SearchHit[] = [];
  for (const result of document.querySelectorAll('.result')) {
    if (result.classList.contains('result--ad')) continue;
    const link = result.querySelector('a.result__a');
    if (!link) continue;
    const target = resolveRedirect(link.getAttribute('href') ?? '');
    if (!target) continue;
    const snippet = result.querySelector('.result__snippet')?.textContent ?? '';
    hits.push({ title: clean(link.textContent ?? ''), url: target, snippet: clean(snippet) });
  }
  return hits;
}

/** `//duckduckgo.com/l/?uddg=<encoded target>&rut=…` → the target; direct links pass through. */
function resolveRedirect(href: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(href, 'https://duckduckgo.com');
  } catch {
    return undefined;
  }
  const target = parsed.searchParams.get('uddg');
  if (target) return target;
  // Ad clicks go through /y.js; anything else on duckduckgo.com is not a result.
  if (parsed.hostname.endsWith('duckduckgo.com')) return undefined;
  return parsed.href;
}

function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
