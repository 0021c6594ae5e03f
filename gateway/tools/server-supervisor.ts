/**
 * One configured MCP server, kept alive: connect (spawn a stdio child or reach a Streamable HTTP
 * endpoint), list its tools, follow `notifications/tools/list_changed`, and when it goes away mark
 * it down at once and reconnect with backoff. Calls to a server that is not up fail fast with 503.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Env, McpServerConfig } from '../config.js';
import type { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { ChildProcessTransport } from './child-process-transport.js';
import { childEnv, expandArgs, expandRecord, expandValue } from './env-expansion.js';
import { nextRestart, type RestartPolicy } from './restart-policy.js';
import type { ServerFault } from './server-fault.js';
import { fromMcpFailure, toolUnavailable } from './tool-errors.js';
import type { TraceSpan } from '../tracing/trace-span.js';
import { JSONRPC_REQUEST_ID, MCP_METHOD_NAME, NETWORK_TRANSPORT } from '../../telemetry/semconv.js';

/** `starting` (connecting), `up`, `down` (waiting to restart), `crash-loop` (restarting slowly), `stopped`. */
export type ServerStatus = 'starting' | 'up' | 'down' | 'crash-loop' | 'stopped';

export interface SupervisorDeps {
  /** The gateway's environment, source of `${VAR}` values (and PATH, HOME, NODE_V8_COVERAGE). */
  env: Env;
  logger: Logger;
  policy: RestartPolicy;
  /** Called whenever this server's tool list or availability changes. */
  onToolsChanged: (server: ServerSupervisor) => void;
  /** Bound on spawn + initialize + first tools/list. */
  connectTimeoutMs: number;
  /** How long close() waits for a child at each step (stdin end, SIGTERM) before escalating. */
  closeGraceMs?: number;
  /** Tracing is on under this `service.name`: a stdio child is named `<tracedAs>-<server>`. */
  tracedAs?: string;
}

/** The config of one server after `${VAR}` expansion: what is actually spawned or reached. */
export type ResolvedServer =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: string; headers: Record<string, string> };

/**
 * Expand a server's config against the gateway's environment.
 *
 * @example
 *   resolveServer({ command: 'node', args: ['a.js'], env: { KEY: '${KEY}' }, ... }, process.env)
 *   // { kind: 'stdio', command: 'node', args: ['a.js'], env: { PATH, HOME, KEY, …envPassthrough matches } }
 */
export function resolveServer(name: string, config: McpServerConfig, env: Env): ResolvedServer {
  if ('command' in config) {
    return {
      kind: 'stdio',
      command: expandValue(config.command, env) ?? config.command,
      args: expandArgs(config.args, env),
      env: childEnv(config.env, env, config.envPassthrough),
      ...(config.cwd ? { cwd: config.cwd } : {}),
    };
  }
  const url = expandValue(config.url, env);
  if (url === undefined) throw new Error(`mcpServers.${name}.url: a variable in "${config.url}" is not set`);
  return { kind: 'http', url, headers: expandRecord(config.headers, env) };
}

export class ServerSupervisor {
  readonly name: string;
  readonly config: McpServerConfig;
  status: ServerStatus = 'starting';
  /** The server's tools as last listed; kept while it is down so its names stay known. */
  tools: Tool[] = [];
  /** Restart attempts after the first start. */
  restarts = 0;
  /** Why the last attempt or connection ended, for health and logs. */
  lastError?: ServerFault;

  private readonly deps: SupervisorDeps;
  private readonly resolved: ResolvedServer;
  private client?: Client;
  private transport?: Transport;
  /** Bumped on every connect attempt; callbacks of an older attempt are ignored. */
  private generation = 0;
  private upSince = 0;
  private quickCrashes = 0;
  private nextAttemptAt = 0;
  private restartTimer?: NodeJS.Timeout;
  /** `tools/call` params on their way out, and the span that carries their id (see `traceSends`). */
  private readonly tracedCalls = new WeakMap<object, TraceSpan>();

  constructor(name: string, config: McpServerConfig, deps: SupervisorDeps) {
    this.name = name;
    this.config = config;
    this.deps = deps;
    this.resolved = resolveServer(name, config, deps.env);
    // The child exports its own spans under its own name (OTEL_* reach it through envPassthrough).
    const { resolved } = this;
    if (deps.tracedAs && resolved.kind === 'stdio' && 'command' in config && !('OTEL_SERVICE_NAME' in config.env)) {
      resolved.env.OTEL_SERVICE_NAME = `${deps.tracedAs}-${name}`;
    }
  }

  /** The environment a stdio child gets (for tests and diagnostics); undefined for HTTP servers. */
  get spawnEnv(): Record<string, string> | undefined {
    return this.resolved.kind === 'stdio' ? { ...this.resolved.env } : undefined;
  }

  /** The running child's pid (stdio servers only). */
  get pid(): number | undefined {
    return this.transport instanceof ChildProcessTransport && !this.transport.exit ? this.transport.pid : undefined;
  }

  get prefix(): string {
    return this.config.prefix;
  }

  /** First connection. Never throws: a server that cannot start is down and retried. */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Seconds until the next restart attempt (at least 1), for Retry-After. */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((this.nextAttemptAt - Date.now()) / 1000));
  }

  /**
   * Call one of this server's tools by its own (unprefixed) name. Throws 503 tool_unavailable at
   * once when the server is not up; other failures go through `fromMcpFailure`.
   */
  async callTool(
    publicName: string,
    toolName: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    span?: TraceSpan,
  ): Promise<CallToolResult> {
    const client = this.client;
    if (this.status !== 'up' || !client) throw toolUnavailable(publicName, this.name, this.retryAfterSeconds());
    // The connection this call went out on: a late failure must not mark a newer one down.
    const generation = this.generation;
    const params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, string> } = {
      name: toolName,
      arguments: args,
    };
    // The caller's execute_tool span is the MCP client span: its context goes in params._meta
    // (SEP-414), sampled or not, so the server's span follows the same decision.
    const context = span?.headers();
    if (span && context?.traceparent) {
      params._meta = context;
      if (span.recording) {
        span.set({ [MCP_METHOD_NAME]: 'tools/call', [NETWORK_TRANSPORT]: this.resolved.kind === 'stdio' ? 'pipe' : 'tcp' });
        this.tracedCalls.set(params, span);
      }
    }
    try {
      // A plain request, not client.callTool(): that one checks the output schema itself and throws
      // InvalidParams for a bad result, as if the caller were at fault. The host checks it instead.
      return await client.request({ method: 'tools/call', params }, CallToolResultSchema, {
        signal,
        timeout: this.config.timeoutMs,
      });
    } catch (err) {
      const cancelled = signal?.aborted ?? false;
      // An HTTP server has no process to watch: a failed connection is how we learn it is gone.
      // That call is answered like every later one while the server is down: 503 with Retry-After.
      if (this.resolved.kind === 'http' && !cancelled && isConnectionFailure(err)) {
        this.handleDisconnect(generation, { kind: 'unreachable', message: describe(err) });
        throw toolUnavailable(publicName, this.name, this.retryAfterSeconds());
      }
      throw this.failure(err, publicName, signal);
    }
  }

  /**
   * A failed call to this server as a GatewayError, through `fromMcpFailure` with this server's real
   * timeout and restart time; a GatewayError passes unchanged.
   */
  failure(err: unknown, publicName: string, signal?: AbortSignal): GatewayError {
    return fromMcpFailure(err, {
      tool: publicName,
      server: this.name,
      timeoutMs: this.config.timeoutMs,
      cancelled: signal?.aborted ?? false,
      retryAfterSeconds: this.retryAfterSeconds(),
    });
  }

  /** Stop for good: no more restarts, the child is ended (stdin, SIGTERM, SIGKILL). */
  async close(): Promise<void> {
    this.status = 'stopped';
    this.generation++;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    if (this.transport instanceof ChildProcessTransport) await this.transport.close();
  }

  private createTransport(): Transport {
    const resolved = this.resolved;
    if (resolved.kind === 'http') {
      return new StreamableHTTPClientTransport(new URL(resolved.url), { requestInit: { headers: resolved.headers } });
    }
    const logger = this.deps.logger;
    const server = this.name;
    return new ChildProcessTransport({
      command: resolved.command,
      args: resolved.args,
      env: resolved.env,
      cwd: resolved.cwd,
      closeGraceMs: this.deps.closeGraceMs,
      onStderrLine: (line) => logger.debug({ server, stderr: line }, 'tool server stderr'),
    });
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    this.status = 'starting';
    const transport = this.createTransport();
    this.traceSends(transport);
    const client = new Client({ name: 'switchyard-gateway', version: '0.1.0' }, { capabilities: {} });
    // The transport reports why it failed (a DNS failure, a refused connection) before it closes: keep it for /health.
    let transportError: Error | undefined;
    client.onerror = (error) => {
      transportError = error;
      this.deps.logger.debug({ server: this.name, err: describe(error) }, 'tool server transport error');
    };
    client.onclose = () => this.handleDisconnect(generation, this.exitFault(transport) ?? closeFault(transportError));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (generation === this.generation && this.status === 'up') void this.refreshTools(generation);
    });
    this.client = client;
    this.transport = transport;
    const started = Date.now();
    try {
      // One bound for the whole start: initialize and every page of tools/list.
      const deadline = started + this.deps.connectTimeoutMs;
      await client.connect(transport, { timeout: this.deps.connectTimeoutMs });
      const tools = await listAllTools(client, deadline);
      if (generation !== this.generation) return;
      this.tools = tools;
      this.status = 'up';
      this.upSince = Date.now();
      this.lastError = undefined;
      this.deps.logger.info(
        { server: this.name, pid: this.pid, tools: tools.length, ms: Date.now() - started, restarts: this.restarts },
        'tool server up',
      );
      this.deps.onToolsChanged(this);
    } catch (err) {
      if (generation !== this.generation || this.status !== 'starting') return;
      const exit = this.exitFault(transport);
      this.lastError = { kind: 'start_failed', message: `${describe(err)}${exit ? ` (${exit.message})` : ''}` };
      this.deps.logger.warn({ server: this.name, err: this.lastError.message }, 'tool server failed to start');
      this.scheduleRestart(0);
      await client.close().catch(() => undefined);
      if (transport instanceof ChildProcessTransport) await transport.close();
    }
  }

  /**
   * The JSON-RPC id of a traced call is the SDK's to choose, when it sends the request: read it
   * there (`jsonrpc.request.id`). Untraced calls pass with one WeakMap lookup.
   */
  private traceSends(transport: Transport): void {
    if (!this.deps.tracedAs) return;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const params = 'params' in message ? message.params : undefined;
      const span = params && 'id' in message ? this.tracedCalls.get(params) : undefined;
      if (span && 'id' in message) span.set({ [JSONRPC_REQUEST_ID]: String(message.id) });
      return send(message, options);
    };
  }

  private exitFault(transport: Transport): ServerFault | undefined {
    if (!(transport instanceof ChildProcessTransport) || !transport.exit) return undefined;
    if (transport.fault) return { kind: 'misbehaved', message: `killed: it ${transport.fault}` };
    const { code, signal } = transport.exit;
    // Neither: it never started (the spawn error itself says why).
    if (code === null && signal === null) return undefined;
    return { kind: 'exited', message: signal ? `killed by ${signal}` : `exited with code ${code}` };
  }

  /** The connection ended: mark down now (calls fail fast), tell the registry, plan a restart. */
  private handleDisconnect(generation: number, fault: ServerFault): void {
    if (generation !== this.generation || (this.status !== 'up' && this.status !== 'starting')) return;
    const wasUp = this.status === 'up';
    const uptimeMs = wasUp ? Date.now() - this.upSince : 0;
    this.lastError = fault;
    this.scheduleRestart(uptimeMs);
    this.deps.logger.warn(
      { server: this.name, reason: fault.message, uptimeMs, retryInMs: this.nextAttemptAt - Date.now() },
      'tool server down',
    );
    if (wasUp) {
      const client = this.client;
      this.client = undefined;
      void client?.close().catch(() => undefined);
      this.deps.onToolsChanged(this);
    }
  }

  private scheduleRestart(uptimeMs: number): void {
    const decision = nextRestart({ quickCrashes: this.quickCrashes, uptimeMs }, this.deps.policy);
    this.quickCrashes = decision.quickCrashes;
    this.status = decision.crashLoop ? 'crash-loop' : 'down';
    this.nextAttemptAt = Date.now() + decision.delayMs;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restarts++;
      void this.connect();
    }, decision.delayMs);
    this.restartTimer.unref();
  }

  private async refreshTools(generation: number): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const tools = await listAllTools(client, Date.now() + this.deps.connectTimeoutMs);
      if (generation !== this.generation || this.status !== 'up') return;
      this.tools = tools;
      this.deps.logger.info({ server: this.name, tools: tools.length }, 'tool server tools changed');
      this.deps.onToolsChanged(this);
    } catch (err) {
      this.deps.logger.warn({ server: this.name, err: describe(err) }, 'tool server tools/list failed after list_changed');
    }
  }
}

/** Pages one listing may take: far past any real server, short of one that never stops paging. */
const MAX_TOOL_PAGES = 100;

/**
 * Every page of tools/list, all by `deadline`. A plain request, not client.listTools(): that one
 * also compiles each tool's output schema, and one it cannot compile would keep the whole server
 * down (tool-schemas.ts tolerates such a schema; the server checks its own output).
 */
async function listAllTools(client: Client, deadline: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    const timeout = deadline - Date.now();
    if (timeout <= 0) throw new Error('tools/list did not finish within connectTimeoutMs');
    const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsResultSchema, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (!cursor) return tools;
    if (seen.has(cursor) || pages >= MAX_TOOL_PAGES) throw new Error(`tools/list kept paging (${pages} pages)`);
    seen.add(cursor);
  }
}

/**
 * The HTTP server is gone or lost this client (refused, reset, a 5xx, 404 for a lost session), as
 * opposed to an answer it gave: an MCP error, a result that fails the schema, a 4xx about this one
 * request. Those fail the call, not the server.
 */
function isConnectionFailure(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === undefined || err.code === 404 || err.code >= 500;
  return err instanceof TypeError; // fetch's own failures
}

/** An error's message with its causes (fetch's "fetch failed" says why only in `cause`: getaddrinfo ENOTFOUND …). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? describe(err.cause) : undefined;
  return cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
}

/** Why a connection closed: an HTTP server that could not be reached says so, with the transport's reason. */
function closeFault(transportError: Error | undefined): ServerFault {
  if (transportError === undefined) return { kind: 'closed', message: 'connection closed' };
  if (isConnectionFailure(transportError)) return { kind: 'unreachable', message: describe(transportError) };
  return { kind: 'closed', message: `connection closed: ${describe(transportError)}` };
}
