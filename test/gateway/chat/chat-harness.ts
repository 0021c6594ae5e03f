/**
 * What the chat tests share: a gateway whose models point at a scripted upstream, with the
 * fixture MCP servers (echo, slow, and a slow one with a short timeout) as its tools, and the
 * official `openai` client pointed at it.
 */
import OpenAI from 'openai';
import { startTestGateway, walletHeaders, WALLET, type TestGateway } from '../../helpers/gateway.js';
import { fixtureServer, runnableEnv } from '../tools/fixture-servers.js';
import type { ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import type { Env } from '../../../gateway/config.js';
import type { ToolTraceEntry } from '../../../gateway/chat/chat-types.js';

export interface ChatGatewayOptions {
  upstream: ScriptedUpstream;
  /** Add the fixture MCP servers (default true). */
  tools?: boolean;
  config?: (json: Record<string, unknown>) => void;
  env?: Env;
  /** Extra environment for the slow fixture server (e.g. SLOW_CANCEL_LOG). */
  slowEnv?: Record<string, string>;
}

export async function startChatGateway(options: ChatGatewayOptions): Promise<TestGateway> {
  return startTestGateway({
    env: runnableEnv(options.env as Record<string, string> | undefined),
    config: (json) => {
      const models = json.models as Array<{ upstream: Record<string, unknown> }>;
      models[0].upstream.baseUrl = options.upstream.baseUrl;
      models[1].upstream.baseUrl = options.upstream.baseUrl;
      models[1].upstream.timeoutMs = 600;
      if (options.tools !== false) {
        json.mcpServers = {
          echo: fixtureServer('echo'),
          slow: fixtureServer('slow', { env: options.slowEnv }),
          quick: fixtureServer('slow', { prefix: 'quick_', timeoutMs: 300 }),
        };
      }
      options.config?.(json);
    },
  });
}

/** The official client, as a user would configure it: the base URL, an API key, the wallet header. */
export function openaiFor(gateway: TestGateway, apiKey: string, wallet = WALLET): OpenAI {
  return new OpenAI({
    baseURL: `${gateway.url}/v1`,
    apiKey,
    defaultHeaders: { 'x-wallet-address': wallet },
    maxRetries: 0,
    timeout: 30_000,
  });
}

/** What a completion's `tool_trace` holds. */
export type TraceEntry = ToolTraceEntry;

/** The gateway's extra field on a completion. */
export function traceOf(completion: unknown): TraceEntry[] {
  return (completion as { tool_trace: TraceEntry[] }).tool_trace;
}

/** POST a raw chat body with fetch (for refusals the typed client would not send). */
export async function postChat(gateway: TestGateway, body: unknown, headers: Record<string, string> = walletHeaders()) {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}
