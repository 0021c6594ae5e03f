/**
 * The tool host: starts every enabled MCP server from config in parallel, aggregates their tools
 * into one registry, runs calls by public name (with the server's timeout, the caller's signal,
 * metrics), answers the built-in `list_tools`, and reports each server into /health.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Env, McpServerConfig } from '../config.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { LIST_TOOLS_NAME, listToolsInfo, runListTools } from './list-tools-builtin.js';
import { DEFAULT_RESTART_POLICY, type RestartPolicy } from './restart-policy.js';
import { publicFault, type ServerFault } from './server-fault.js';
import { ServerSupervisor, type ServerStatus } from './server-supervisor.js';
import { fromToolErrorResult, toolCallCancelled, toolNotFound } from './tool-errors.js';
import { buildRegistry, buildRegistryLenient, paramNames, type RegisteredTool, type ServerTools } from './tool-registry.js';
import { ToolSchemas } from './tool-schemas.js';
import type { CallToolOptions, ToolInfo, ToolRunner } from './types.js';
import { NO_SPAN, type TraceSpan } from '../tracing/trace-span.js';
import { errorTypeOf } from '../tracing/error-type.js';
import {
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_CALL_RESULT,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_TYPE,
} from '../../telemetry/semconv.js';

/** The errors made from a result with `isError` (the server answered; the tool failed). */
const ERROR_RESULTS = new WeakSet<object>();

export interface ToolHostOptions {
  /** `config.mcpServers`. */
  servers: Record<string, McpServerConfig>;
  /** The gateway's environment: `${VAR}` values, PATH, HOME, NODE_V8_COVERAGE. */
  env: Env;
  logger: Logger;
  metrics?: Pick<Metrics, 'toolCalls' | 'toolDuration'>;
  policy?: Partial<RestartPolicy>;
  /** Bound on one server's spawn + initialize + tools/list; default 20 s. */
  connectTimeoutMs?: number;
  /** Per step of stopping a child (stdin end, then SIGTERM, then SIGKILL); default 2 s. */
  closeGraceMs?: number;
  /**
   * The gateway's `service.name` when tracing is on: each stdio child gets
   * `OTEL_SERVICE_NAME=<tracedAs>-<server>` (unless its configured env names one).
   */
  tracedAs?: string;
}

/** A configuration the host cannot start with (duplicate tool names, an unusable server entry). */
export class ToolHostStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolHostStartError';
  }
}

export interface ToolServerHealth {
  name: string;
  status: ServerStatus | 'disabled';
  /** Tools that can run now (0 while the server is not up). */
  tools: number;
  restarts: number;
  /** Why it is not up: a category and a short message safe for an unauthenticated reader. */
  error?: ServerFault;
}

export class ToolHost implements ToolRunner {
  private readonly options: ToolHostOptions;
  private readonly supervisors = new Map<string, ServerSupervisor>();
  private readonly disabled: string[] = [];
  private readonly schemas = new ToolSchemas();
  private registry = new Map<string, RegisteredTool>();
  private available: ToolInfo[] = [];
  private started = false;
  private closed = false;

  constructor(options: ToolHostOptions) {
    this.options = options;
    const policy = { ...DEFAULT_RESTART_POLICY, ...options.policy };
    for (const [name, config] of Object.entries(options.servers)) {
      if (config.disabled) {
        this.disabled.push(name);
        continue;
      }
      try {
        this.supervisors.set(
          name,
          new ServerSupervisor(name, config, {
            env: options.env,
            logger: options.logger,
            policy,
            connectTimeoutMs: options.connectTimeoutMs ?? 20_000,
            closeGraceMs: options.closeGraceMs,
            tracedAs: options.tracedAs,
            onToolsChanged: () => this.rebuild(),
          }),
        );
      } catch (err) {
        throw new ToolHostStartError((err as Error).message);
      }
    }
    this.rebuild();
  }

  /**
   * Start every enabled server in parallel and build the registry. A server that cannot start is
   * down (and retried); two servers offering one name is a ToolHostStartError naming both (every
   * child is stopped first).
   */
  async start(): Promise<void> {
    await Promise.all([...this.supervisors.values()].map((supervisor) => supervisor.start()));
    try {
      this.registry = buildRegistry(this.serverTools(), [LIST_TOOLS_NAME]);
    } catch (err) {
      await this.close();
      throw new ToolHostStartError((err as Error).message);
    }
    this.started = true;
    this.rebuild();
    const up = [...this.supervisors.values()].filter((s) => s.status === 'up').length;
    this.options.logger.info({ servers: this.supervisors.size, up, tools: this.available.length }, 'tool host started');
  }

  /** Every tool that can run now (its server is up), built-ins first. */
  listTools(): ToolInfo[] {
    return this.available;
  }

  /** Whether a configured server (even one down now) or a built-in offers `name`. */
  hasTool(name: string): boolean {
    return name === LIST_TOOLS_NAME || this.registry.has(name);
  }

  /**
   * Run a tool by public name; resolves with its structured result or throws a GatewayError. The
   * call is one `execute_tool {name}` span under `options.trace` (with the MCP attributes when a
   * server runs it: no second MCP client span beside it).
   */
  async callTool(name: string, args: Record<string, unknown>, options: CallToolOptions = {}): Promise<unknown> {
    const started = performance.now();
    const entry = this.registry.get(name);
    // Unknown names are one metric label, so a client cannot blow up the label set.
    const label = entry || name === LIST_TOOLS_NAME ? name : '(unknown)';
    let outcome = 'ok';
    const span = (options.trace ?? NO_SPAN).child(`execute_tool ${label}`, 'client', {
      [GEN_AI_OPERATION_NAME]: 'execute_tool',
      [GEN_AI_TOOL_NAME]: label,
      [GEN_AI_TOOL_TYPE]: 'function',
      [GEN_AI_TOOL_CALL_ID]: options.callId,
    });
    span.content(GEN_AI_TOOL_CALL_ARGUMENTS, () => args);
    try {
      if (options.signal?.aborted) throw toolCallCancelled(name);
      if (name === LIST_TOOLS_NAME) return runListTools(args, this.available);
      const supervisor = entry && this.supervisors.get(entry.server);
      if (!entry || !supervisor) throw toolNotFound(name);
      const result = await this.callOn(supervisor, entry, name, args, options.signal, span);
      span.content(GEN_AI_TOOL_CALL_RESULT, () => result);
      return result;
    } catch (err) {
      outcome = err instanceof GatewayError ? err.code : 'tool_error';
      // A result with isError is `tool_error` by the MCP conventions, whatever code the server gave.
      span.fail(ERROR_RESULTS.has(err as object) ? 'tool_error' : errorTypeOf(err), err instanceof GatewayError ? err.code : undefined);
      throw err;
    } finally {
      span.end();
      const seconds = (performance.now() - started) / 1000;
      this.options.metrics?.toolCalls.inc({ tool: label, outcome });
      this.options.metrics?.toolDuration.observe({ tool: label, outcome }, seconds);
    }
  }

  /** Check, run and check again one call on its server; any failure is a GatewayError by the server's converter. */
  private async callOn(
    supervisor: ServerSupervisor,
    entry: RegisteredTool,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal | undefined,
    span: TraceSpan,
  ): Promise<unknown> {
    try {
      this.schemas.checkArguments(entry.tool, args);
      const result = await supervisor.callTool(name, entry.toolName, args, signal, span);
      if (result.isError) {
        const failure = fromToolErrorResult(name, result);
        ERROR_RESULTS.add(failure);
        throw failure;
      }
      this.schemas.checkResult(name, entry.tool, result);
      return resultValue(result);
    } catch (err) {
      throw supervisor.failure(err, name, signal);
    }
  }

  /** For /health: one entry per configured server; degraded when an enabled one is not up. */
  health(): { fields: { tool_servers: ToolServerHealth[] }; degraded: boolean } {
    // Tools routed to each server: a name another server owns is listed by this one but never runs here.
    const routed = new Map<string, number>();
    for (const entry of this.registry.values()) routed.set(entry.server, (routed.get(entry.server) ?? 0) + 1);
    const servers: ToolServerHealth[] = [...this.supervisors.values()].map((s) => ({
      name: s.name,
      status: s.status,
      tools: s.status === 'up' ? (routed.get(s.name) ?? 0) : 0,
      restarts: s.restarts,
      ...(s.status !== 'up' && s.lastError ? { error: publicFault(s.lastError) } : {}),
    }));
    for (const name of this.disabled) servers.push({ name, status: 'disabled', tools: 0, restarts: 0 });
    return { fields: { tool_servers: servers }, degraded: servers.some((s) => s.status !== 'up' && s.status !== 'disabled') };
  }

  /** One configured server's supervisor (pid, spawn env, status), for diagnostics and tests. */
  server(name: string): ServerSupervisor | undefined {
    return this.supervisors.get(name);
  }

  /** Stop every server; no child survives. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.supervisors.values()].map((supervisor) => supervisor.close()));
  }

  private serverTools(): ServerTools[] {
    return [...this.supervisors.values()].map((s) => ({ server: s.name, prefix: s.prefix, tools: s.tools }));
  }

  /** Recompute the registry (after start) and the list of tools that can run now. */
  private rebuild(): void {
    if (this.closed) return;
    if (this.started) {
      this.registry = buildRegistryLenient(
        this.serverTools(),
        [LIST_TOOLS_NAME],
        (clash) => this.options.logger.error({ tool: clash.tool, servers: clash.servers }, `${clash.message} The second is not routed.`),
        this.registry,
      );
    }
    const available: ToolInfo[] = [listToolsInfo()];
    for (const entry of this.registry.values()) {
      if (this.supervisors.get(entry.server)?.status !== 'up') continue;
      const inputSchema = entry.tool.inputSchema as Record<string, unknown>;
      available.push({
        name: entry.publicName,
        description: entry.tool.description ?? '',
        inputSchema,
        ...(entry.tool.outputSchema ? { outputSchema: entry.tool.outputSchema as Record<string, unknown> } : {}),
        params: paramNames(inputSchema),
        server: entry.server,
      });
    }
    this.available = available;
  }
}

/** The structured output of a successful call; servers without one give their text (JSON if it parses). */
function resultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const texts = result.content.filter((block) => block.type === 'text').map((block) => (block as { text: string }).text);
  if (texts.length === 1 && result.content.length === 1) {
    try {
      return JSON.parse(texts[0]);
    } catch {
      return { text: texts[0] };
    }
  }
  return { content: result.content };
}

/**
 * Build a tool host from config; call `start()` before serving.
 *
 * @example
 *   const tools = createToolHost({ servers: config.mcpServers, env: process.env, logger, metrics })
 *   await tools.start()
 */
export function createToolHost(options: ToolHostOptions): ToolHost {
  return new ToolHost(options);
}
