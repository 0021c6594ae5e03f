import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import type { KnowledgeIndex } from '../knowledge-index.js';

export const knowledgeSearchInput = z.object({
  query: z.string().trim().min(1).max(500).describe('A question or keywords, e.g. "how does Lido stETH earn rewards"'),
  project: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe('Only search this project: its name or an alias (case-insensitive), e.g. "Uniswap" or "MakerDAO"'),
  limit: z.number().int().min(1).max(20).default(5).describe('Most results to return (1–20, default 5)'),
});

export const knowledgeSearchOutput = z.object({
  query: z.string(),
  results: z.array(
    z.object({
      project: z.string(),
      title: z.string(),
      section: z.string(),
      snippet: z.string(),
      score: z.number(),
      source_url: z.string(),
      as_of: z.string().describe("Date (YYYY-MM-DD) the passage's facts were last checked"),
    }),
  ),
});

/**
 * `knowledge_search`: full-text search over the curated project pages. An unknown `project`
 * is an `invalid_arguments` error that lists the known projects, so a model can correct itself
 * instead of reading an empty list as "the project has no such facts".
 *
 * @example
 * createServer({ name, version, tools: [knowledgeSearchTool(createKnowledgeIndex(loadCorpus(dir)))] });
 */
export function knowledgeSearchTool(index: KnowledgeIndex) {
  return defineTool({
    name: 'knowledge_search',
    description:
      'Search a curated knowledge base about Ethereum-ecosystem projects (what a protocol does, how it works, its token, ' +
      'governance, risks, official links). Returns the best matching passages with their source; an empty list means the ' +
      'knowledge base does not cover the question (try web search next).',
    input: knowledgeSearchInput,
    output: knowledgeSearchOutput,
    async run({ query, project, limit }) {
      let projectId: string | undefined;
      if (project !== undefined) {
        projectId = index.resolveProject(project);
        if (!projectId) {
          throw new ToolError('invalid_arguments', `Unknown project "${project}". Known projects: ${index.projectNames.join(', ')}.`, {
            param: 'project',
          });
        }
      }
      return { query, results: index.search(query, { projectId, limit }) };
    },
  });
}
