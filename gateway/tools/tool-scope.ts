/**
 * Which of the gateway's tools an API key may use: tool names, or `server:*` for every tool of an
 * `mcpServers` entry (`list_tools` belongs to server `gateway`). A scope is interned per distinct
 * list (`toolScope`), and it filters a tool list once per list the tool host hands out, so a
 * scoped key's requests reuse one filtered list (and the chat loop one offer built from it).
 *
 * @example
 *   const scope = toolScope(['calculator', 'search:*'])
 *   scope.allows({ name: 'web_search', server: 'search' })   // true
 *   scope.filter(host.listTools())                           // the same array on every call until the tools change
 */
import { LRUCache } from 'lru-cache';
import type { ToolInfo } from './types.js';

/** Distinct scopes kept: one per distinct list of tools keys carry. */
const MAX_SCOPES = 1_000;

export class ToolScope {
  private readonly names = new Set<string>();
  private readonly servers = new Set<string>();
  private lastInfos?: ToolInfo[];
  private lastFiltered: ToolInfo[] = [];

  /** `key` names the scope (its patterns, sorted). */
  constructor(
    patterns: string[],
    readonly key: string,
  ) {
    for (const pattern of patterns) {
      if (pattern.endsWith(':*')) this.servers.add(pattern.slice(0, -2));
      else this.names.add(pattern);
    }
  }

  allows(tool: Pick<ToolInfo, 'name' | 'server'>): boolean {
    return this.names.has(tool.name) || this.servers.has(tool.server);
  }

  /** Whether `name` is allowed, its server looked up in `infos` (a tool not listed now is matched by name only). */
  allowsName(name: string, infos: ToolInfo[]): boolean {
    if (this.names.has(name)) return true;
    const info = infos.find((tool) => tool.name === name);
    return info !== undefined && this.servers.has(info.server);
  }

  /** The allowed tools of `infos`: the same array for the same list. */
  filter(infos: ToolInfo[]): ToolInfo[] {
    if (infos !== this.lastInfos) {
      this.lastFiltered = infos.filter((tool) => this.allows(tool));
      this.lastInfos = infos;
    }
    return this.lastFiltered;
  }
}

const scopes = new LRUCache<string, ToolScope>({ max: MAX_SCOPES });

/** The one ToolScope of this list of patterns (in any order). */
export function toolScope(patterns: string[]): ToolScope {
  const key = [...new Set(patterns)].sort().join('\n');
  let scope = scopes.get(key);
  if (!scope) {
    scope = new ToolScope(patterns, key);
    scopes.set(key, scope);
  }
  return scope;
}
