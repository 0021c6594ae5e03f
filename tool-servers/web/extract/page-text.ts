import { charsetOf, decodeText, type HttpResponse } from '../../kit/index.js';

// `<meta charset="…">` and `<meta http-equiv="Content-Type" content="text/html; charset=…">`.
const META_CHARSET = /<meta\b[^>]*?charset\s*=\s*["']?\s*([\w.:-]+)/i;
const HTML_TYPES = new Set(['', 'text/html', 'application/xhtml+xml']);

/**
 * A fetched page as text. A charset in the Content-Type header wins (httpRequest has decoded by
 * it already). Legacy HTML often names its charset only in a `<meta>` tag, within the first 1024
 * bytes where the HTML standard says to look; that is read next. Otherwise UTF-8.
 *
 * @example
 *   pageText(response, 'text/html') // a Latin-1 page with <meta charset="iso-8859-1"> reads as 'Café'
 */
export function pageText(response: Pick<HttpResponse, 'text' | 'bytes'>, contentType: string): string {
  const mime = contentType.split(';')[0].trim().toLowerCase();
  if (charsetOf(contentType) || !HTML_TYPES.has(mime)) return response.text;
  // Latin-1 maps every byte to one character, so the ASCII of the tag survives whatever the encoding.
  const label = META_CHARSET.exec(response.bytes.subarray(0, 1024).toString('latin1'))?.[1].toLowerCase();
  return label ? decodeText(response.bytes, label) : response.text;
}
