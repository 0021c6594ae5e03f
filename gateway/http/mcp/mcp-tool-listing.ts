/**
 * The tools `/mcp` offers: what `/v1/tools` lists (every server's tools that can run now and
 * `list_tools`), as MCP tool records with their input and output schemas. MCP caps a tool name at
 * 64 characters, so a longer one is left out and warned about once (at start for the tools known
 * then, later for any a restarted server brings).
 *
 * @example
 *   const listing = new McpToolListing(toolHost, logger)
 *   listing.tools()           // [{ name: 'list_tools', description, inputSchema, outputSchema }, …]
 *   listing.offers('get_time') // true while some configured server offers it
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../logger.js';
import type { ToolInfo, ToolRunner } from '../../tools/types.js';
import type { ListToolsResult } from '../../tools/list-tools-builtin.js';
import type { ToolScope } from '../../tools/tool-scope.js';

/** MCP's limit on a tool name (SEP-986, the 2025-11-25 revision). */
export const MCP_TOOL_NAME_MAX = 64;

export class McpToolListing {
  private lastInfos?: ToolInfo[];
  private listed: Tool[] = [];
  private readonly warned = new Set<string>();
  /** Per key scope (interned, tools/tool-scope.ts): the list it was built from and the records. */
  private readonly scoped = new WeakMap<ToolScope, { from: Tool[]; listed: Tool[] }>();

  constructor(
    private readonly runner: ToolRunner,
    private readonly logger: Logger,
  ) {
    this.tools(); // the warnings for the tools known at start go out now
  }

  /**
   * Cached by the list's identity: the tool host hands out a new array only when something
   * changed (a restart, list_changed), and tools/list is on every client's start-up path.
   */
  tools(scope?: ToolScope): Tool[] {
    const infos = this.runner.listTools();
    if (infos !== this.lastInfos) {
      this.listed = infos.filter((info) => this.fits(info.name)).map(toMcpTool);
      this.lastInfos = infos;
    }
    if (!scope) return this.listed;
    // A key's scope: filtered once per list and scope, not on every tools/list.
    let kept = this.scoped.get(scope);
    if (kept?.from !== this.listed) {
      const allowed = new Set(scope.filter(infos).map((info) => info.name));
      kept = { from: this.listed, listed: this.listed.filter((tool) => allowed.has(tool.name)) };
      this.scoped.set(scope, kept);
    }
    return kept.listed;
  }

  /** A `list_tools` answer as /mcp may give it: only tools /mcp offers (its answer covers every tool the gateway has), and the key's scope allows. */
  onlyOffered(answer: ListToolsResult, scope?: ToolScope): ListToolsResult {
    return { tools: answer.tools.filter((tool) => this.offers(tool.name) && (!scope || scope.allows(tool))) };
  }

  /** Whether `tools/call` may run `name`: a tool the gateway has (even if its server is down now) with a name MCP allows. */
  offers(name: string): boolean {
    return name.length <= MCP_TOOL_NAME_MAX && this.runner.hasTool(name);
  }

  private fits(name: string): boolean {
    if (name.length <= MCP_TOOL_NAME_MAX) return true;
    if (!this.warned.has(name)) {
      this.warned.add(name);
      this.logger.warn(
        { tool: name, length: name.length },
        `tool name is longer than MCP's ${MCP_TOOL_NAME_MAX} characters: left out of /mcp (still on /v1/tools)`,
      );
    }
    return false;
  }
}

function toMcpTool(info: ToolInfo): Tool {
  return {
    name: info.name,
    description: info.description,
    inputSchema: { type: 'object', ...info.inputSchema } as Tool['inputSchema'],
    ...(info.outputSchema ? { outputSchema: { type: 'object', ...info.outputSchema } as Tool['outputSchema'] } : {}),
  };
}
