/**
 * The charset a Content-Type header names, lower-cased, or undefined.
 *
 * @example
 *   charsetOf('text/html; charset="ISO-8859-1"') // 'iso-8859-1'
 */
export function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  return match ? match[1].toLowerCase() : undefined;
}

/**
 * Decode `bytes` in the encoding `label` names (any WHATWG label: `iso-8859-1`, `shift_jis`,
 * `gbk`…). A missing label or one this runtime does not know is UTF-8: a wrong guess garbles a
 * few characters, a thrown error would lose the whole body.
 *
 * @example
 *   decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'iso-8859-1') // 'café'
 */
export function decodeText(bytes: Uint8Array, label: string | undefined): string {
  if (label !== undefined && label !== 'utf-8' && label !== 'utf8') {
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      // RangeError: unknown label. Fall through to UTF-8.
    }
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
