/** Talk to an in-process onchain server through the MCP SDK client over linked in-memory transports. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createOnchainServer, type OnchainServerOptions } from '../../../tool-servers/onchain/server.js';

export type ToolOutcome =
  { ok: true; result: Record<string, unknown> } | { ok: false; error: { code: string; message: string; param?: string } };

export interface OnchainTestClient {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  /** The result of a call that must succeed. */
  ok<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T>;
  /** The error of a call that must fail. */
  fail(name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; param?: string }>;
  close(): Promise<void>;
}

export async function connectOnchain(options: OnchainServerOptions): Promise<OnchainTestClient> {
  const server = createOnchainServer(options);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'onchain-test', version: '1.0.0' });
  await client.connect(clientTransport);
  const call = async (name: string, args: Record<string, unknown>): Promise<ToolOutcome> => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) {
      const text = (result.content as Array<{ type: string; text: string }>)[0].text;
      return { ok: false, error: (JSON.parse(text) as { error: { code: string; message: string; param?: string } }).error };
    }
    return { ok: true, result: result.structuredContent as Record<string, unknown> };
  };
  return {
    client,
    call,
    async ok<T>(name: string, args: Record<string, unknown>) {
      const outcome = await call(name, args);
      if (!outcome.ok) throw new Error(`${name} failed: ${outcome.error.code}: ${outcome.error.message}`);
      return outcome.result as T;
    },
    async fail(name, args) {
      const outcome = await call(name, args);
      if (outcome.ok) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(outcome.result)}`);
      return outcome.error;
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}
