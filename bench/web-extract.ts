/**
 * What the web_extract SSRF guard and readability pipeline cost, on loopback:
 *   (a) baseline: undici `request` over a shared keep-alive Agent, body read, no checks;
 *   (b) guardedFetch: URL check + a fresh connection pinned to the checked address (no reuse, by design);
 *   (c) guardedFetch + Readability + Turndown on a realistic article (the whole tool minus MCP).
 * Each phase runs for a fixed time with 4 concurrent callers. Run: npx tsx bench/web-extract.ts
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { guardedFetch } from '../tool-servers/web/extract/guarded-fetch.js';
import { toReadable } from '../tool-servers/web/extract/readable.js';

const PHASE_MS = 5000;
const CONCURRENCY = 4;
const article = readFileSync(new URL('../test/fixtures/web/articles/news-article.html', import.meta.url), 'utf8');

const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(article));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
const url = new URL(`http://127.0.0.1:${port}/article`);
const allow = [`127.0.0.1:${port}`];
const signal = new AbortController().signal;

async function phase(name: string, once: () => Promise<void>): Promise<{ name: string; perSecond: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  const end = Date.now() + PHASE_MS;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const started = performance.now();
        await once();
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { name, perSecond: (latencies.length / PHASE_MS) * 1000, p50: pick(0.5), p99: pick(0.99) };
}

const pool = new Agent({ keepAliveTimeout: 30_000, connections: CONCURRENCY });
const results = [
  await phase('(a) undici keep-alive, no checks', async () => {
    const response = await request(url, { dispatcher: pool });
    await response.body.text();
  }),
  await phase('(b) guardedFetch (check + pinned new connection)', async () => {
    await guardedFetch(url, { allow, timeoutMs: 5000, maxBytes: 5 * 1024 * 1024, signal });
  }),
  await phase('(c) guardedFetch + Readability + Turndown', async () => {
    const page = await guardedFetch(url, { allow, timeoutMs: 5000, maxBytes: 5 * 1024 * 1024, signal });
    toReadable(page.text, page.contentType, page.finalUrl);
  }),
];
await pool.close();
server.close();

const baseline = results[0].perSecond;
console.log(
  `web_extract pipeline, ${CONCURRENCY} concurrent callers, ${PHASE_MS / 1000} s per phase, ${article.length} B article (loopback; absolute numbers are rough)`,
);
for (const r of results) {
  console.log(
    `${r.name.padEnd(52)} ${r.perSecond.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  ×${(r.perSecond / baseline).toFixed(2)} of (a)`,
  );
}
