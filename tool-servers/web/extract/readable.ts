import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import TurndownService from 'turndown';

/**
 * HTML characters parsed at most. The DOM build, Readability and Turndown run synchronously, so
 * no deadline can interrupt them and the server answers nothing else meanwhile; their cost grows
 * with the page. An article's text sits well within its first 2 MiB; the rest is cut unparsed.
 */
export const MAX_HTML_CHARS = 2 * 1024 * 1024;

export interface ReadablePage {
  title: string;
  byline?: string;
  site_name?: string;
  /** Markdown for HTML pages; the body itself for plain text and JSON. */
  content: string;
}

/**
 * Turn a fetched body into text a model can read. HTML goes through a linkedom DOM, Mozilla
 * Readability (which drops navigation, ads and comments around the article) and Turndown to
 * Markdown (only the first MAX_HTML_CHARS of HTML are parsed); text/plain and JSON pass through
 * unchanged.
 *
 * @example
 *   toReadable('<html><title>T</title><body><article>…</article></body></html>', 'text/html', 'https://a.example/')
 */
export function toReadable(body: string, contentType: string, pageUrl: string): ReadablePage {
  const mime = contentType.split(';')[0].trim().toLowerCase();
  if (mime === 'text/html' || mime === 'application/xhtml+xml' || (mime === '' && /^\s*</.test(body))) return htmlToReadable(body, pageUrl);
  return { title: '', content: body };
}

/** Whether `contentType` is something toReadable can turn into text. */
export function isReadableType(contentType: string): boolean {
  const mime = contentType.split(';')[0].trim().toLowerCase();
  return (
    mime === '' || mime.startsWith('text/') || mime === 'application/xhtml+xml' || mime === 'application/json' || mime.endsWith('+json')
  );
}

function htmlToReadable(page: string, pageUrl: string): ReadablePage {
  const html = page.length > MAX_HTML_CHARS ? page.slice(0, MAX_HTML_CHARS) : page;
  const { document } = parseHTML(html);
  // linkedom has no base URI, so Readability would leave links relative: resolve them first.
  absolutize(document, 'a[href]', 'href', pageUrl);
  absolutize(document, 'img[src]', 'src', pageUrl);
  removeAdSlots(document);
  // Navigation menus are never article text; on short pages Readability would keep them.
  for (const menu of document.querySelectorAll('nav, [role="navigation"]')) menu.remove();
  const pageTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  const headings = [...document.querySelectorAll('h1')].map((h) => (h.textContent ?? '').replace(/\s+/g, ' ').trim()).filter(Boolean);
  const article = new Readability(document as unknown as Document).parse();
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  turndown.remove(['script', 'style', 'noscript', 'iframe', 'form']);
  if (article?.content) {
    return {
      title: articleTitle(article.title?.trim() || pageTitle, headings),
      ...(article.byline ? { byline: article.byline.trim() } : {}),
      ...(article.siteName ? { site_name: article.siteName.trim() } : {}),
      content: tidy(turndown.turndown(article.content)),
    };
  }
  // Not article-shaped (a short page, an index): the body minus its chrome is the best we have.
  // Readability has rewritten the DOM it was given, so start again from the source.
  const { document: fresh } = parseHTML(html);
  absolutize(fresh, 'a[href]', 'href', pageUrl);
  for (const chrome of fresh.querySelectorAll('nav, header, footer, aside, script, style, noscript')) chrome.remove();
  removeAdSlots(fresh);
  return { title: pageTitle, content: tidy(turndown.turndown(fresh.body?.innerHTML ?? '')) };
}

/**
 * `<title>` usually carries the site name ("Post — Blog"). When the page's own h1 is the start
 * of it, the h1 is the article's title.
 */
function articleTitle(title: string, headings: string[]): string {
  const heading = headings.find((h) => title !== h && title.startsWith(h) && /^\s*[-|–—:·»]/.test(title.slice(h.length)));
  return heading ?? title;
}

// Class or id tokens of ad and sponsor slots. Readability's own filter misses common ones like "ad-slot".
const AD_TOKEN = /^(ad|ads|adv|advert\w*|ad[-_]\w+|ads[-_]\w+|\w+[-_]ad|sponsor\w*|promo(ted)?|dfp[-_]?\w*)$/i;

function removeAdSlots(document: ParsedDocument): void {
  for (const element of document.querySelectorAll('[class], [id]')) {
    const tokens = `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`.split(/\s+/).filter(Boolean);
    if (tokens.some((token) => AD_TOKEN.test(token)) && element.tagName !== 'BODY' && element.tagName !== 'HTML') element.remove();
  }
}

type ParsedDocument = ReturnType<typeof parseHTML>['document'];

function absolutize(document: ParsedDocument, selector: string, attribute: string, base: string): void {
  for (const element of document.querySelectorAll(selector)) {
    const value = element.getAttribute(attribute);
    if (!value) continue;
    try {
      element.setAttribute(attribute, new URL(value, base).href);
    } catch {
      // An unparsable link stays as written.
    }
  }
}

function tidy(markdown: string): string {
  return markdown.replace(/\n{3,}/g, '\n\n').trim();
}
