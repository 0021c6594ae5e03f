/**
 * Public tool names → the server (and the server's own name) that answers them. Names are exact:
 * a server's `prefix` is prepended as written, and two servers offering one public name is an
 * error naming both, so a tool never silently shadows another.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

export interface RegisteredTool {
  publicName: string;
  /** The name the server itself knows the tool by. */
  toolName: string;
  server: string;
  tool: Tool;
}

/** A server's contribution: its name, prefix and tools as last listed. */
export interface ServerTools {
  server: string;
  prefix: string;
  tools: Tool[];
}

export class DuplicateToolError extends Error {
  readonly tool: string;
  readonly servers: [string, string];
  constructor(tool: string, first: string, second: string) {
    super(
      `Tool "${tool}" is offered by both "${first}" and "${second}". ` +
        `Give one of them a "prefix" in mcpServers (e.g. "prefix": "${second}_").`,
    );
    this.name = 'DuplicateToolError';
    this.tool = tool;
    this.servers = [first, second];
  }
}

/**
 * Build the name table. `reserved` names (built-ins) count as offered by "gateway".
 * Throws DuplicateToolError on the first clash.
 *
 * @example
 *   buildRegistry([{ server: 'web', prefix: '', tools }], ['list_tools']).get('web_search')
 */
export function buildRegistry(servers: ServerTools[], reserved: string[]): Map<string, RegisteredTool> {
  return buildRegistryLenient(servers, reserved, (clash) => {
    throw clash;
  });
}

/**
 * Like buildRegistry, but a clash is reported instead of thrown: used after start-up, when a
 * restarted or changed server must not take the whole registry down. A name stays with the server
 * that had it in `previous` (even while that server is down), so a running server never loses a
 * tool because another one restarted with the same name; otherwise the first in config order wins.
 *
 * @example
 *   registry = buildRegistryLenient(servers, ['list_tools'], (clash) => logger.error(clash.message), registry)
 */
export function buildRegistryLenient(
  servers: ServerTools[],
  reserved: string[],
  onClash: (clash: DuplicateToolError) => void,
  previous: ReadonlyMap<string, RegisteredTool> = new Map(),
): Map<string, RegisteredTool> {
  const owner = new Map<string, string>(reserved.map((name) => [name, 'gateway']));
  for (const { server, prefix, tools } of servers) {
    for (const tool of tools) {
      const publicName = `${prefix}${tool.name}`;
      if (previous.get(publicName)?.server === server && !owner.has(publicName)) owner.set(publicName, server);
    }
  }
  const table = new Map<string, RegisteredTool>();
  for (const { server, prefix, tools } of servers) {
    for (const tool of tools) {
      const publicName = `${prefix}${tool.name}`;
      const first = owner.get(publicName);
      if (first !== undefined && first !== server) {
        onClash(new DuplicateToolError(publicName, first, server));
        continue;
      }
      owner.set(publicName, server);
      table.set(publicName, { publicName, toolName: tool.name, server, tool });
    }
  }
  return table;
}

/** Argument names of a JSON Schema object, in schema order. */
export function paramNames(inputSchema: Record<string, unknown>): string[] {
  const properties = inputSchema.properties;
  return properties && typeof properties === 'object' ? Object.keys(properties) : [];
}
