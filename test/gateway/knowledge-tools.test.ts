import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestGateway, walletHeaders, type TestGateway } from '../helpers/gateway.js';
import { runnableEnv } from './tools/fixture-servers.js';

// The real knowledge server behind the real gateway (built: run `npm run build` first).
describe('knowledge_search through the gateway', () => {
  let gateway: TestGateway;

  before(async () => {
    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = true;
        json.mcpServers = {
          knowledge: {
            command: process.execPath,
            args: ['dist/tool-servers/knowledge/main.js'],
            env: { KNOWLEDGE_DIR: '${KNOWLEDGE_DIR}' },
          },
        };
      },
      env: runnableEnv({ KNOWLEDGE_DIR: join(process.cwd(), 'config/knowledge') }),
    });
  });

  after(async () => {
    await gateway?.stop();
  });

  async function execute(body: unknown) {
    const response = await fetch(`${gateway.url}/v1/tools/execute`, {
      method: 'POST',
      headers: walletHeaders(),
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  test('GET /v1/tools lists knowledge_search from the knowledge server', async () => {
    const response = await fetch(`${gateway.url}/v1/tools`, { headers: walletHeaders() });
    assert.equal(response.status, 200);
    const { tools } = (await response.json()) as { tools: Array<{ name: string; server: string; params: string[] }> };
    const tool = tools.find((t) => t.name === 'knowledge_search');
    assert.deepEqual([tool?.server, tool?.params], ['knowledge', ['query', 'project', 'limit']]);
  });

  test('POST /v1/tools/execute runs knowledge_search', async () => {
    const { status, body } = await execute({ tool: 'knowledge_search', args: { query: 'How many SKY do I get for one MKR?', limit: 2 } });
    assert.equal(status, 200);
    assert.deepEqual([body.ok, body.tool], [true, 'knowledge_search']);
    const result = body.result as { query: string; results: Array<{ project: string; section: string; source_url: string }> };
    assert.equal(result.query, 'How many SKY do I get for one MKR?');
    assert.equal(result.results.length, 2);
    assert.deepEqual(
      [result.results[0].project, result.results[0].section, result.results[0].source_url],
      ['Sky', 'Token', 'https://developers.sky.money'],
    );
  });

  test('an unanswerable question is an empty list, an unknown project a 400 naming the field', async () => {
    const empty = await execute({ tool: 'knowledge_search', args: { query: 'Who won the 2018 FIFA World Cup?' } });
    assert.deepEqual([empty.status, empty.body.result], [200, { query: 'Who won the 2018 FIFA World Cup?', results: [] }]);
    const unknown = await execute({ tool: 'knowledge_search', args: { query: 'fees', project: 'Solana' } });
    assert.equal(unknown.status, 400);
    assert.deepEqual([unknown.body.ok, unknown.body.tool], [false, 'knowledge_search']);
    const error = unknown.body.error as { code: string; param: string; message: string };
    assert.deepEqual([error.code, error.param], ['invalid_tool_arguments', 'project']);
    assert.match(error.message, /^Unknown project "Solana"\. Known projects: 1inch, Aave, Across, Arbitrum, .*, zkSync\.$/);
  });
});
