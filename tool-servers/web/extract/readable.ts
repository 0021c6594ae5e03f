import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import TurndownService from 'turndown';

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
 * Markdown; text/plain and JSON pass through unchanged.
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
  return mime === '' || mime.startsWith('text/') || mime === 'application/xhtml+xml' || mime === 'application/json' || mime.endsWith('+json');
}

function htmlToReadable(html: string, pageUrl: string): ReadablePage {
  const { document } = parseHTML(html);
  // linkedom has no base URI, so Readability would leave links relative: resolve them first.
  absolutize(document, 'a[href]', 'href', pageUrl);
  absolutize(document, 'img[src]', 'src', pageUrl);
  const pageTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  const article = new Readability(document as unknown as Document).parse();
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  turndown.remove(['script', 'style', 'noscript', 'iframe', 'form']);
  if (article?.content) {
    return {
      title: article.title?.trim() || pageTitle,
      ...(article.byline ? { byline: article.byline.trim() } : {}),
      ...(article.siteName ? { site_name: article.siteName.trim() } : {}),
      content: tidy(turndown.turndown(article.content)),
    };
  }
  // Not article-shaped (a short page, an index): the body minus its chrome is the best we have.
  for (const chrome of document.querySelectorAll('nav, header, footer, aside, script, style')) chrome.remove();
  return { title: pageTitle, content: tidy(turndown.turndown(document.body?.innerHTML ?? '')) };
}

function absolutize(document: ReturnType<typeof parseHTML>['document'], selector: string, attribute: string, base: string): void {
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
