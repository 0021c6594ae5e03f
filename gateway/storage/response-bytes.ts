/** What a stored response's body weighs against its wallet's byte quota (responses/response-store.ts): its UTF-8 bytes. */
export function bodyBytes(body: string): number {
  return Buffer.byteLength(body, 'utf8');
}
