/**
 * Shared by the key-limits tests: minting a key with limits over HTTP (a fresh SIWE proof from
 * `account`), and firing `n` concurrent `POST /v1/tools/execute` of list_tools (1 credit each)
 * spread over the given gateways, counting the answers by status and error code.
 */
import type { PrivateKeyAccount } from 'viem/accounts';
import { authHeaders, walletHeaders } from './gateway.js';
import { call, signedProof, type Answer } from './accounts.js';

/** POST /auth/api-keys with a proof and `limits`; the whole answer (its body has `key`, `id`, `limits`). */
export async function mintKeyWith(gateway: { url: string }, account: PrivateKeyAccount, limits: Record<string, unknown>): Promise<Answer> {
  const proof = await signedProof(gateway, account);
  return call(`${gateway.url}/auth/api-keys`, {
    method: 'POST',
    headers: walletHeaders(account.address),
    body: { name: 'agent', message: proof.message, signature: proof.signature, ...limits },
  });
}

/** `n` concurrent executions of list_tools with `key`, round-robin over `urls`: answers counted as "200" or "402 <code>". */
export async function burstOfExecutes(urls: string[], key: string, wallet: string, n: number): Promise<Map<string, number>> {
  const answers = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await fetch(`${urls[i % urls.length]}/v1/tools/execute`, {
        method: 'POST',
        headers: authHeaders(key, wallet),
        body: JSON.stringify({ tool: 'list_tools', args: {} }),
      });
      const body = (await res.json()) as { error?: { code?: string } };
      return res.status === 200 ? '200' : `${res.status} ${body.error?.code}`;
    }),
  );
  const counts = new Map<string, number>();
  for (const answer of answers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
  return counts;
}
