/**
 * What the fleet tests share: replicas speaking the recorded wire formats (vLLM, SGLang,
 * llama.cpp, Ollama), a gateway whose first model is a fleet of them (with the built utility
 * server, whose `get_time` the recordings call), where a conversation went, and where the
 * gateway's own rules say it should go.
 */
import { startTestGateway, walletHeaders, WALLET, type TestGateway } from '../../helpers/gateway.js';
import { runnableEnv } from '../tools/fixture-servers.js';
import type { Replica } from '../../fixtures/upstreams/replica.js';
import { conversationKey } from '../../../gateway/chat/conversation-key.js';
import { chooseDeployment } from '../../../gateway/chat/deployment-choice.js';
import { deploymentSeed } from '../../../gateway/chat/rendezvous.js';

export const MODEL = 'svc-32b-conductor';

export interface Member {
  name: string;
  replica: Replica;
  weight?: number;
  priority?: number;
}

export interface FleetOptions {
  routing?: Record<string, unknown>;
  /** The utility server's tools (default true). */
  tools?: boolean;
  config?: (json: Record<string, unknown>) => void;
}

/** A gateway whose conductor is served by `members` (any server at `replica.baseUrl`); stopped by the caller. */
export function fleetGateway(
  members: Array<Omit<Member, 'replica'> & { replica: { baseUrl: string } }>,
  options: FleetOptions = {},
): Promise<TestGateway> {
  return startTestGateway({
    env: runnableEnv(),
    config: (json) => {
      const models = json.models as Array<Record<string, unknown>>;
      models[0] = {
        id: MODEL,
        alias: 'conductor',
        upstreams: members.map((m) => ({
          name: m.name,
          baseUrl: m.replica.baseUrl,
          model: 'Qwen/Qwen3-32B',
          timeoutMs: 20_000,
          ...(m.weight ? { weight: m.weight } : {}),
          ...(m.priority ? { priority: m.priority } : {}),
        })),
        // No probe but the start's unless a test asks: a probe's timing never decides a test.
        routing: { probeIntervalMs: 3_600_000, ...options.routing },
      };
      json.limits = { chatConcurrencyPerWallet: 64 };
      if (options.tools !== false) {
        json.mcpServers = {
          utility: {
            command: process.execPath,
            args: ['dist/tool-servers/utility/main.js'],
            env: { OPEN_METEO_GEOCODING_BASE_URL: 'http://127.0.0.1:9', OPEN_METEO_BASE_URL: 'http://127.0.0.1:9' },
          },
        };
      }
      options.config?.(json);
    },
  });
}

/** The members (by name) that received a request carrying this user message. */
export function servedBy(members: Member[], text: string): string[] {
  return members.flatMap((m) =>
    m.replica.requests.filter((r) => r.body.messages.some((msg) => msg.role === 'user' && msg.content === text)).map(() => m.name),
  );
}

/** Where the gateway's own rules send the conversation that opens with `text` (all members healthy and idle). */
export function homeOf(members: Member[], text: string, wallet = WALLET): string {
  const key = conversationKey(wallet, [{ role: 'user', content: text }])!;
  const candidates = members.map((m) => ({
    name: m.name,
    seed: deploymentSeed(MODEL, m.name),
    weight: m.weight ?? 1,
    priority: m.priority ?? 0,
    outstanding: 0,
    healthy: true,
  }));
  return chooseDeployment(candidates, key, { imbalance: 4, keyed: true }).chosen!.name;
}

/** Openings whose conversations (of `wallet`) `members` would send to `name`. */
export function openingsFor(members: Member[], name: string, count: number, tag: string, wallet = WALLET): string[] {
  const found: string[] = [];
  for (let i = 0; found.length < count; i++) {
    const text = `${tag} ${i}: what time is it in Paris?`;
    if (homeOf(members, text, wallet) === name) found.push(text);
  }
  return found;
}

export interface Answer {
  status: number;
  content: string;
  /** The error body (non-streamed) or error chunk (streamed). */
  error?: { code: string; message: string };
  /** Streamed: visible content arrived before the error chunk. */
  contentBeforeError?: boolean;
  body?: Record<string, any>;
  headers?: Headers;
}

/** POST /v1/chat/completions, streamed or not, read whole. */
export async function chat(gateway: TestGateway, body: Record<string, unknown>, headers = walletHeaders()): Promise<Answer> {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'conductor', ...body }),
  });
  if (!body.stream || res.status !== 200) {
    const json = (await res.json()) as Record<string, any>;
    return { status: res.status, content: json.choices?.[0]?.message?.content ?? '', error: json.error, body: json, headers: res.headers };
  }
  const answer: Answer = { status: 200, content: '', headers: res.headers };
  for (const block of (await res.text()).split('\n\n')) {
    if (!block.startsWith('data: ') || block === 'data: [DONE]') continue;
    const chunk = JSON.parse(block.slice('data: '.length)) as Record<string, any>;
    const delta = chunk.choices?.[0]?.delta?.content;
    if (typeof delta === 'string') answer.content += delta;
    if (chunk.error) {
      answer.error = chunk.error;
      answer.contentBeforeError = answer.content !== '';
    }
  }
  return answer;
}

export const ask = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/** GET /health's deployments of the conductor. */
export async function deploymentsOf(gateway: TestGateway): Promise<Array<{ name: string; state: string; outstanding: number }>> {
  const health = (await (await fetch(`${gateway.url}/health`)).json()) as { models: Array<{ id: string; deployments: any[] }> };
  return health.models.find((m) => m.id === MODEL)!.deployments;
}

/** A metric's value for one deployment, from /metrics (free mode needs no token). */
export async function metric(gateway: TestGateway, name: string, deployment: string): Promise<number | undefined> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{model="${MODEL}",deployment="${deployment}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}
