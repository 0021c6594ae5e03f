/**
 * A fleet of three replicas behind one model, routed three ways in one run: LiteLLM's default
 * (`simple-shuffle`, weighted random), LiteLLM's `least-busy` (fewest requests in flight), and
 * Switchyard's own (weighted rendezvous hashing of the conversation key, imbalance escape).
 *
 * The replicas are a simulator of a prefix-caching inference server (role `replica`): a chat
 * template renders the request (system message, the tool offer, then every message), split in
 * blocks of 64 characters hashed with everything before them, as vLLM's automatic prefix caching
 * hashes its blocks; an LRU of 2 MB of prompt characters keeps the blocks, and the blocks of what
 * a request generated too (the next round's prompt begins with them, and SGLang's RadixAttention
 * and vLLM both keep them). A request costs 1 µs per prompt character not in that cache (prefill)
 * and 20 µs per output token (decode); a replica runs at most 8 requests at once, and its prefill
 * is its compute: one request's prefill runs after the one before it (decode overlaps, as a batch
 * does). Times are kept on a virtual clock per replica and waited out with timers, so the
 * simulator burns no CPU for them.
 *
 * LiteLLM's two strategies run in a router of their own (role `router`, in front of the same
 * replicas: random by weight, or the fewest in flight; a refused connection cools that replica for
 * 5 s and the request goes to another, as LiteLLM's retries and cooldowns do; a stream cut
 * mid-way reaches its caller cut), which the gateway reaches as a model with one upstream;
 * Switchyard's fleet is a model whose three deployments are the replicas, with its default routing
 * settings; a second such model never moves a chat off its replica (`imbalance` out of reach), to
 * show the floor affinity alone reaches. One gateway process serves every model, with the shipped
 * tool servers (their schemas and the preamble are the tool offer of every call) and a fixture
 * tool, `lookup`, whose answer is 2,000 characters.
 *
 * Scenario: 200 chats of 4 tool rounds each (a 400-character user message, the model calls
 * `lookup` four times, then answers; 60 output tokens a call), 16 at once, half of them streamed.
 * Each router runs it from cold caches, `--runs` times interleaved (medians printed), then once
 * more while the second replica is killed (SIGKILL) after 100 chats have finished.
 *
 * Printed: prefill characters computed, mean and p95 chat latency, failed chats with a replica
 * killed halfway, and what one routing decision costs (the conversation key once per request, the
 * choice once per call), with the targets of issue 38: prefill ≤ 0.5× and latency ≤ 0.67× of
 * least-busy, 0 failed non-streamed chats and 0 failed streamed chats that had shown nothing,
 * ≤ 10 µs per decision. The exit code is 1 when a printed target is missed (`--report-only`: 0).
 *
 *   npx tsx bench/fleet.ts                 (runs `npm run build` first; about 3 minutes)
 *   npx tsx bench/fleet.ts --runs 5 --report-only
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { reportTargets, type TargetCheck } from './targets.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');

/** The replica simulator (issue 38). */
const BLOCK_CHARS = 64;
const CACHE_CHARS = 2 * 1024 * 1024;
const PREFILL_US_PER_CHAR = 1;
const DECODE_US_PER_TOKEN = 20;
const MAX_RUNNING = 8;
const OUTPUT_TOKENS = 60;

/** The scenario. */
const CHATS = 200;
const AT_ONCE = 16;
const TOOL_ROUNDS = 4;
const USER_CHARS = 400;
/** What `lookup` returns inside its JSON (`{"text":"…"}`): 2,000 characters as the model reads it. */
const RESULT_TEXT_CHARS = 2_000 - '{"text":""}'.length;
const REPLICAS = 3;
/** LiteLLM's default cooldown_time. */
const ROUTER_COOLDOWN_MS = 5_000;

const TARGETS = { prefill: 0.5, latency: 0.67, decisionUs: 10 };

// ---------------------------------------------------------------- role: replica

/** The LRU of prefix blocks: each block's key hashes it with every character before it. */
class PrefixCache {
  private readonly blocks = new Map<number, true>();
  private readonly capacity = CACHE_CHARS / BLOCK_CHARS;

  /** Characters of `text` past its longest cached prefix of whole blocks; every whole block of it is now the most recently used. */
  admit(text: string): number {
    let h1 = 0x811c9dc5;
    let h2 = 0x12345678;
    let cached = 0;
    let hit = true;
    const whole = text.length - (text.length % BLOCK_CHARS);
    for (let at = 0; at < whole; at += BLOCK_CHARS) {
      for (let i = at; i < at + BLOCK_CHARS; i++) {
        const c = text.charCodeAt(i);
        h1 = Math.imul(h1 ^ c, 0x01000193);
        h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      }
      const key = (h1 >>> 0) * 2_097_152 + (h2 >>> 11); // 53 bits
      if (hit && this.blocks.has(key)) cached++;
      else hit = false;
      this.blocks.delete(key);
      this.blocks.set(key, true);
    }
    for (const key of this.blocks.keys()) {
      if (this.blocks.size <= this.capacity) break;
      this.blocks.delete(key);
    }
    return text.length - cached * BLOCK_CHARS;
  }
}

interface ChatBody {
  messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> }>;
  tools?: unknown[];
  tool_choice?: unknown;
  stream?: boolean;
}

/** A chat template's rendering: the system message, the tool offer, each message, then the assistant's turn opens. */
function render(body: ChatBody): string {
  const [first, ...rest] = body.messages;
  const system = first?.role === 'system' ? first : undefined;
  let text = system ? `<|system|>\n${system.content}\n` : '';
  text += `<tools>${JSON.stringify(body.tools ?? [])}</tools>\n`;
  for (const m of system ? rest : body.messages) {
    text += `<|${m.role}|>\n${m.content ?? ''}`;
    for (const call of m.tool_calls ?? []) text += `<tool_call>${call.function.name}${call.function.arguments}</tool_call>`;
    text += '\n';
  }
  return `${text}<|assistant|>\n`;
}

/** The simulated model: `lookup` four times after the user's message, then an answer; 60 tokens (240 characters) each time. */
function reply(body: ChatBody): { call?: { name: string; arguments: string }; text?: string } {
  let lastUser = body.messages.length - 1;
  while (lastUser > 0 && body.messages[lastUser].role !== 'user') lastUser--;
  const user = body.messages[lastUser]?.content ?? '';
  const rounds = body.messages.slice(lastUser).filter((m) => m.role === 'assistant' && m.tool_calls?.length).length;
  const offered = (body.tools ?? []).some((t) => (t as { function: { name: string } }).function.name === 'lookup');
  const fill = (prefix: string, chars: number) => (prefix + user).slice(0, chars).padEnd(chars, '.');
  if (offered && body.tool_choice !== 'none' && rounds < TOOL_ROUNDS) {
    const query = fill(`round ${rounds + 1}: `, OUTPUT_TOKENS * 4 - 32);
    return { call: { name: 'lookup', arguments: JSON.stringify({ query, chars: RESULT_TEXT_CHARS }) } };
  }
  return { text: fill('Here is what I found. ', OUTPUT_TOKENS * 4) };
}

async function runReplica(port: number): Promise<string> {
  let cache = new PrefixCache();
  let prefilled = 0;
  let requests = 0;
  /** When this replica's prefill is free again, on performance.now()'s clock. */
  let prefillFreeAt = 0;
  let running = 0;
  const waiting: Array<() => void> = [];
  const admitted = () => {
    if (running < MAX_RUNNING) {
      running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolveAdmit) => waiting.push(resolveAdmit));
  };
  const done = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const piece of req) raw += String(piece);
    const body = JSON.parse(raw) as ChatBody;
    await admitted();
    try {
      const prompt = render(body);
      const uncached = cache.admit(prompt);
      prefilled += uncached;
      requests++;
      const now = performance.now();
      const firstToken = Math.max(now, prefillFreeAt) + (uncached * PREFILL_US_PER_CHAR) / 1000;
      prefillFreeAt = firstToken;
      const end = firstToken + (OUTPUT_TOKENS * DECODE_US_PER_TOKEN) / 1000;
      const answer = reply(body);
      const base = { id: `chatcmpl-sim${requests}`, object: 'chat.completion.chunk', created: 1, model: 'sim' };
      const event = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      await sleepUntil(firstToken);
      if (res.destroyed) return;
      const text = answer.text ?? '';
      const shown = Math.floor(text.length / 3);
      res.write(event({ role: 'assistant', content: text.slice(0, shown) }));
      await sleepUntil(end);
      if (res.destroyed) return;
      const promptTokens = Math.ceil(prompt.length / 4);
      const usage = { prompt_tokens: promptTokens, completion_tokens: OUTPUT_TOKENS, total_tokens: promptTokens + OUTPUT_TOKENS };
      const rest = answer.call
        ? event({ tool_calls: [{ index: 0, id: `call_sim${requests}x${port}`, type: 'function', function: answer.call }] })
        : event({ content: text.slice(shown) });
      res.end(
        `${rest}${event({}, answer.call ? 'tool_calls' : 'stop')}data: ${JSON.stringify({ ...base, choices: [], usage })}\n\ndata: [DONE]\n\n`,
      );
      // What it generated stays cached too (SGLang's RadixAttention and vLLM's prefix cache keep
      // the KV of generated tokens): the next round's prompt begins with it, rendered the same.
      cache.admit(`${prompt}${answer.call ? `<tool_call>${answer.call.name}${answer.call.arguments}</tool_call>` : text}\n`);
    } finally {
      done();
    }
  }

  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      const stats = req.url?.endsWith('/stats');
      res.writeHead(200, { 'content-type': 'application/json' }).end(stats ? JSON.stringify({ prefilled, requests }) : '{"data":[]}');
    } else if (req.url?.endsWith('/reset')) {
      cache = new PrefixCache();
      prefilled = 0;
      requests = 0;
      res.writeHead(204).end();
    } else void chat(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolveListen) => server.listen(port, '127.0.0.1', resolveListen));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

function sleepUntil(at: number): Promise<void> {
  const ms = at - performance.now();
  return ms <= 0 ? Promise.resolve() : new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

// ---------------------------------------------------------------- role: router (LiteLLM's strategies)

async function runRouter(strategy: 'simple-shuffle' | 'least-busy', replicas: string[]): Promise<string> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const inFlight = replicas.map(() => 0);
  const cooledUntil = replicas.map(() => 0);

  /** A replica not tried yet and not cooling: at random (equal weights), or among the fewest in flight at random. */
  function pick(tried: Set<number>): number | undefined {
    const now = performance.now();
    const open = replicas.map((_, i) => i).filter((i) => !tried.has(i) && cooledUntil[i] <= now);
    if (open.length === 0) return undefined;
    if (strategy === 'simple-shuffle') return open[Math.floor(Math.random() * open.length)];
    const fewest = Math.min(...open.map((i) => inFlight[i]));
    const least = open.filter((i) => inFlight[i] === fewest);
    return least[Math.floor(Math.random() * least.length)];
  }

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const piece of req) body += String(piece);
    const tried = new Set<number>();
    for (;;) {
      const i = pick(tried);
      if (i === undefined) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"no deployment available"}}');
        return;
      }
      tried.add(i);
      inFlight[i]++;
      try {
        const upstream = await request(`${replicas[i]}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          dispatcher: agent,
        });
        res.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
        await new Promise<void>((done) => {
          upstream.body.on('data', (chunk: Buffer) => res.write(chunk));
          upstream.body.once('end', () => {
            res.end();
            done();
          });
          upstream.body.once('error', () => {
            res.destroy(); // a stream cut mid-way reaches the caller cut
            done();
          });
        });
        return;
      } catch {
        cooledUntil[i] = performance.now() + ROUTER_COOLDOWN_MS; // no connection: another replica
      } finally {
        inFlight[i]--;
      }
    }
  }

  const server = createServer((req, res) => {
    if (req.method === 'GET') res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    else if (req.url?.endsWith('/reset')) {
      cooledUntil.fill(0);
      res.writeHead(204).end();
    } else void forward(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

// ---------------------------------------------------------------- parent

interface Started {
  child: ChildProcess;
  url: string;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function startRole(role: string, ...args: string[]): Promise<Started> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/fleet.ts', '--role', role, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return new Promise((resolveStart, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolveStart({ child: proc, url: out.split('\n')[0] });
    });
    proc.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
}

const MODELS = {
  shuffle: 'litellm-shuffle',
  leastBusy: 'litellm-least-busy',
  switchyard: 'switchyard',
  affinityOnly: 'switchyard-affinity-only',
} as const;
type Router = keyof typeof MODELS;
const NAMES: Record<Router, string> = {
  shuffle: 'LiteLLM simple-shuffle',
  leastBusy: 'LiteLLM least-busy',
  switchyard: 'Switchyard (defaults)',
  affinityOnly: '  the same, never moving a chat',
};
/** Both of Switchyard's models serve the replicas themselves; the second has no imbalance escape (the floor affinity alone reaches). */
const FLEETS: Router[] = ['switchyard', 'affinityOnly'];

/** The gateway as `npm start` runs it, with the three models and the shipped tool servers plus `lookup`. */
async function startGateway(
  replicas: string[],
  routers: Record<'shuffle' | 'leastBusy', string>,
): Promise<{ child: ChildProcess; url: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-fleet-bench-'));
  process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const shipped = JSON.parse(readFileSync(join(REPO_ROOT, 'config/gateway.json'), 'utf8')) as { mcpServers: Record<string, unknown> };
  const huge = { points: 1_000_000_000, durationSec: 60 };
  const configFile = join(dataDir, 'gateway.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      server: { port, host: '127.0.0.1' },
      freeMode: true,
      logLevel: 'warn',
      limits: { perWallet: huge, perIp: huge, chatConcurrencyPerWallet: 10_000, chatConcurrencyTotal: 10_000 },
      models: [
        ...FLEETS.map((router) => ({
          id: `svc-${MODELS[router]}`,
          alias: MODELS[router],
          upstreams: replicas.map((baseUrl, i) => ({ name: `replica-${i + 1}`, baseUrl, model: 'sim' })),
          // Probed every second, so a replica restarted between scenarios is back before the next.
          routing: { probeIntervalMs: 1_000, ...(router === 'affinityOnly' ? { imbalance: 1_000_000 } : {}) },
        })),
        { id: `svc-${MODELS.shuffle}`, alias: MODELS.shuffle, upstream: { baseUrl: routers.shuffle, model: 'sim' } },
        { id: `svc-${MODELS.leastBusy}`, alias: MODELS.leastBusy, upstream: { baseUrl: routers.leastBusy, model: 'sim' } },
      ],
      mcpServers: {
        ...shipped.mcpServers,
        bench: { command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/mcp/lookup.ts'], env: {} },
      },
    }),
  );
  const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts;
  const flags = scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
  const proc = spawn(process.execPath, [...flags, 'dist/gateway/main.js'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SWITCHYARD_CONFIG: configFile, DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(proc);
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    const tools = await fetch(`${url}/v1/tools`, { headers: { 'x-wallet-address': wallet(0) } }).then(
      async (r) => (r.ok ? ((await r.json()) as { tools?: Array<{ name: string }> }).tools : undefined),
      () => undefined,
    );
    if (tools?.some((t) => t.name === 'lookup')) break;
    if (tries > 600 || proc.exitCode !== null) throw new Error('the gateway did not start with its tools');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child: proc, url };
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

const wallet = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;

/** The 400-character opening of chat `i` of run `run`: unique, so no two chats share a conversation. */
function opening(run: string, i: number): string {
  return `Chat ${i} of ${run}: look this up four times and sum it up. `.padEnd(USER_CHARS, `${i}-${run} `.repeat(8)).slice(0, USER_CHARS);
}

interface ChatResult {
  ms: number;
  streamed: boolean;
  ok: boolean;
  /** Streamed: content had arrived before the error. */
  shown: boolean;
}

const gatewayAgent = new Agent({ keepAliveTimeout: 30_000, connections: AT_ONCE * 2 });

async function oneChat(gateway: string, model: string, run: string, i: number): Promise<ChatResult> {
  const streamed = i % 2 === 1;
  const t0 = performance.now();
  const res = await request(`${gateway}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-wallet-address': wallet(i) },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: opening(run, i) }], stream: streamed }),
    dispatcher: gatewayAgent,
  });
  const text = await res.body.text();
  const ms = performance.now() - t0;
  if (res.statusCode !== 200) return { ms, streamed, ok: false, shown: false };
  if (!streamed) {
    const body = JSON.parse(text) as { tool_trace: unknown[] };
    return { ms, streamed, ok: body.tool_trace.length === TOOL_ROUNDS, shown: false };
  }
  const error = text.indexOf('"finish_reason":"error"');
  const contentAt = text.indexOf('"content":"');
  const ok = error === -1 && text.endsWith('data: [DONE]\n\n');
  return { ms, streamed, ok, shown: contentAt !== -1 && (error === -1 || contentAt < error) };
}

interface Scenario {
  prefilled: number;
  /** Switchyard's calls sent off their conversation's replica (the imbalance escape). */
  moves: number;
  latencies: number[];
  failed: { json: number; streamedBeforeContent: number; streamedAfterContent: number };
}

async function scenario(
  gateway: string,
  router: Router,
  run: string,
  replicas: Started[],
  options: { killAfter?: number } = {},
): Promise<Scenario> {
  await Promise.all(replicas.map((r) => fetch(`${r.url}/reset`, { method: 'POST' })));
  const movesBefore = await affinityMoves(gateway, router);
  const results: ChatResult[] = [];
  let next = 0;
  let finished = 0;
  const worker = async () => {
    while (next < CHATS) {
      const i = next++;
      results.push(await oneChat(gateway, MODELS[router], run, i));
      finished++;
      if (finished === options.killAfter) replicas[1].child.kill('SIGKILL');
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  const live = options.killAfter ? replicas.filter((_, i) => i !== 1) : replicas;
  const stats = await Promise.all(live.map(async (r) => (await (await fetch(`${r.url}/stats`)).json()) as { prefilled: number }));
  const failed = results.filter((r) => !r.ok);
  return {
    prefilled: stats.reduce((sum, s) => sum + s.prefilled, 0),
    moves: (await affinityMoves(gateway, router)) - movesBefore,
    latencies: results.map((r) => r.ms),
    failed: {
      json: failed.filter((r) => !r.streamed).length,
      streamedBeforeContent: failed.filter((r) => r.streamed && !r.shown).length,
      streamedAfterContent: failed.filter((r) => r.streamed && r.shown).length,
    },
  };
}

/** Every affinity move of `router`'s fleet so far, from /metrics. */
async function affinityMoves(gateway: string, router: Router): Promise<number> {
  const text = await (await fetch(`${gateway}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`switchyard_upstream_affinity_moves_total{model="svc-${MODELS[router]}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** Until every replica answers and the gateway sees the fleet's deployments up again. */
async function fleetUp(gateway: string): Promise<void> {
  for (;;) {
    const health = (await (await fetch(`${gateway}/health`)).json()) as {
      models: Array<{ id: string; deployments: Array<{ state: string }> }>;
    };
    const fleets = health.models.filter((m) => FLEETS.some((router) => m.id === `svc-${MODELS[router]}`));
    if (fleets.every((m) => m.deployments.every((d) => d.state === 'up'))) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What one routing decision costs in-process, in CPU: Switchyard's key (once per request) and choice (once per call), LiteLLM's picks. */
async function decisionCost(): Promise<{ key: number; choice: number; perCall: number; shuffle: number; leastBusy: number }> {
  const { parseConfig } = await import('../gateway/config.js');
  const { createUpstreams } = await import('../gateway/chat/upstreams.js');
  const { createMetrics } = await import('../gateway/metrics.js');
  const { createLogger } = await import('../gateway/logger.js');
  const { conversationKey } = await import('../gateway/chat/conversation-key.js');
  const config = parseConfig(
    {
      models: [
        {
          id: `svc-${MODELS.switchyard}`,
          alias: MODELS.switchyard,
          upstreams: [1, 2, 3].map((n) => ({ name: `replica-${n}`, baseUrl: `http://127.0.0.1:${9000 + n}/v1`, model: 'sim' })),
        },
      ],
    },
    {},
  );
  const upstreams = createUpstreams(config, {}, createLogger('silent'), createMetrics());
  const fleet = upstreams.fleets.get(`svc-${MODELS.switchyard}`)!;
  const messages = Array.from({ length: 1000 }, (_, i) => [{ role: 'user' as const, content: opening('cost', i) }]);
  const N = 200_000;
  // CPU time (user + system) rather than wall time: other processes on a busy machine do not count.
  const time = (fn: (i: number) => void) => {
    for (let i = 0; i < N / 10; i++) fn(i); // warm up
    const before = process.cpuUsage();
    for (let i = 0; i < N; i++) fn(i);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / N;
  };
  let sink = 0;
  const keys = messages.map((m, i) => conversationKey(wallet(i), m)!);
  const key = time((i) => (sink ^= conversationKey(wallet(i % 1000), messages[i % 1000])!));
  const choice = time((i) => {
    const d = fleet.choose(keys[i % 1000])!;
    fleet.begin(d);
    fleet.end(d);
  });
  const inFlight = [0, 0, 0];
  const shuffle = time(() => (sink ^= Math.floor(Math.random() * 3)));
  const leastBusy = time(() => {
    const fewest = Math.min(...inFlight);
    const least = [0, 1, 2].filter((i) => inFlight[i] === fewest);
    sink ^= least[Math.floor(Math.random() * least.length)];
  });
  await upstreams.close();
  void sink;
  return { key, choice, perCall: choice + key / (TOOL_ROUNDS + 1), shuffle, leastBusy };
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)];
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;

async function main(): Promise<void> {
  const runsAt = process.argv.indexOf('--runs');
  const runs = runsAt === -1 ? 3 : Number(process.argv[runsAt + 1]);
  if (!process.argv.includes('--no-build')) {
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed: the bench runs the compiled gateway in dist/');
  }
  const ports = await Promise.all(Array.from({ length: REPLICAS }, freePort));
  const replicas = await Promise.all(ports.map((port) => startRole('replica', String(port))));
  const replicaUrls = replicas.map((r) => r.url);
  const [shuffle, leastBusy] = await Promise.all([
    startRole('router', 'simple-shuffle', ...replicaUrls),
    startRole('router', 'least-busy', ...replicaUrls),
  ]);
  const gateway = await startGateway(replicaUrls, { shuffle: shuffle.url, leastBusy: leastBusy.url });
  const routerUrls = [shuffle.url, leastBusy.url];
  const routers: Router[] = ['shuffle', 'leastBusy', 'switchyard', 'affinityOnly'];

  const steady: Record<Router, Scenario[]> = { shuffle: [], leastBusy: [], switchyard: [], affinityOnly: [] };
  for (let run = 0; run < runs; run++) {
    for (const router of routers) {
      await Promise.all(routerUrls.map((url) => fetch(`${url}/reset`, { method: 'POST' })));
      steady[router].push(await scenario(gateway.url, router, `run${run}`, replicas));
    }
  }
  const killed: Partial<Record<Router, Scenario>> = {};
  for (const router of routers.filter((r) => r !== 'affinityOnly')) {
    await Promise.all(routerUrls.map((url) => fetch(`${url}/reset`, { method: 'POST' })));
    await fleetUp(gateway.url);
    killed[router] = await scenario(gateway.url, router, `kill-${router}`, replicas, { killAfter: CHATS / 2 });
    // The killed replica comes back on its port for the next router.
    replicas[1] = await startRole('replica', String(ports[1]));
  }
  const cost = await decisionCost();

  const figures = Object.fromEntries(
    routers.map((router) => {
      const scenarios = steady[router];
      return [
        router,
        {
          moves: median(scenarios.map((s) => s.moves)),
          prefilled: median(scenarios.map((s) => s.prefilled)),
          mean: median(scenarios.map((s) => mean(s.latencies))),
          p95: median(scenarios.map((s) => percentile(s.latencies, 95))),
        },
      ];
    }),
  ) as Record<Router, { moves: number; prefilled: number; mean: number; p95: number }>;
  const base = figures.leastBusy;
  const rows = routers.map((router) => {
    const f = figures[router];
    const k = killed[router]?.failed;
    return [
      NAMES[router],
      (f.prefilled / 1e6).toFixed(2),
      (f.prefilled / base.prefilled).toFixed(2),
      f.mean.toFixed(1),
      (f.mean / base.mean).toFixed(2),
      f.p95.toFixed(1),
      (f.p95 / base.p95).toFixed(2),
      k ? `${k.json} / ${k.streamedBeforeContent} / ${k.streamedAfterContent}` : '–',
      FLEETS.includes(router) ? String(f.moves) : '–',
    ];
  });
  const header = [
    'router',
    'prefill M chars',
    '× least-busy',
    'mean ms',
    '×',
    'p95 ms',
    '×',
    'failed, replica killed: json / streamed before / after content',
    'moves',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(
    `\n${CHATS} chats × ${TOOL_ROUNDS} tool rounds, ${AT_ONCE} at once, ${REPLICAS} replicas; medians of ${runs} runs (the killed run once)\n`,
  );
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  console.log(
    `\nrouting decision: Switchyard key ${cost.key.toFixed(2)} µs a request + choice ${cost.choice.toFixed(2)} µs a call = ` +
      `${cost.perCall.toFixed(2)} µs a call (LiteLLM simple-shuffle ${cost.shuffle.toFixed(2)} µs, least-busy ${cost.leastBusy.toFixed(2)} µs; CPU, in-process)`,
  );

  const sy = figures.switchyard;
  const sk = killed.switchyard!.failed;
  const checks: TargetCheck[] = [
    [
      `prefill ${(sy.prefilled / base.prefilled).toFixed(2)}× least-busy ≤ ${TARGETS.prefill}×`,
      sy.prefilled <= TARGETS.prefill * base.prefilled,
    ],
    [`mean latency ${(sy.mean / base.mean).toFixed(2)}× ≤ ${TARGETS.latency}×`, sy.mean <= TARGETS.latency * base.mean],
    [`p95 latency ${(sy.p95 / base.p95).toFixed(2)}× ≤ ${TARGETS.latency}×`, sy.p95 <= TARGETS.latency * base.p95],
    [`replica killed: ${sk.json} failed non-streamed chats = 0`, sk.json === 0],
    [`replica killed: ${sk.streamedBeforeContent} failed streamed chats that had shown nothing = 0`, sk.streamedBeforeContent === 0],
    [`routing decision ${cost.perCall.toFixed(2)} µs a call ≤ ${TARGETS.decisionUs} µs`, cost.perCall <= TARGETS.decisionUs],
  ];
  for (const child of children) child.kill('SIGTERM');
  await gatewayAgent.close();
  reportTargets('targets (issue 38)', checks);
}

const roleAt = process.argv.indexOf('--role');
if (roleAt !== -1) {
  const [role, ...args] = process.argv.slice(roleAt + 1);
  const url =
    role === 'replica' ? await runReplica(Number(args[0])) : await runRouter(args[0] as 'simple-shuffle' | 'least-busy', args.slice(1));
  process.stdout.write(`${url}\n`);
} else {
  await main();
}
