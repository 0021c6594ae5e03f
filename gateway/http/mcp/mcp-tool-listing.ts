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

/** MCP's limit on a tool name (SEP-986, the 2025-11-25 revision). */
export const MCP_TOOL_NAME_MAX = 64;

export class McpToolListing {
  private lastInfos?: ToolInfo[];
  private listed: Tool[] = [];
  private readonly warned = new Set<string>();

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
  tools(): Tool[] {
    const infos = this.runner.listTools();
    if (infos !== this.lastInfos) {
      this.listed = infos.filter((info) => this.fits(info.name)).map(toMcpTool);
      this.lastInfos = infos;
    }
    return this.listed;
  }

  /** A `list_tools` answer as /mcp may give it: only tools /mcp offers (its answer covers every tool the gateway has). */
  onlyOffered(answer: ListToolsResult): ListToolsResult {
    return { tools: answer.tools.filter((tool) => this.offers(tool.name)) };
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
