/**
 * Read a Server-Sent Events body event by event: `data:` payloads and `:` comments (the gateway
 * announces each tool round with `: tool <name>`). Events are separated by a blank line.
 */
export type SseEvent = { data: string } | { comment: string };

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseBlock(block);
      if (event) yield event;
    }
  }
}

function parseBlock(block: string): SseEvent | undefined {
  const data: string[] = [];
  let comment: string | undefined;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) comment = line.slice(1).trimStart();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length) return { data: data.join('\n') };
  return comment === undefined ? undefined : { comment };
}
