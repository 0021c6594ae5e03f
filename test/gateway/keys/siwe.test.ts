/**
 * Minting keys with a Sign-In with Ethereum proof: the flow signed by a viem local account, each
 * refusal with its own code, single-use nonces under a 20-way race, nonce expiry, and
 * smart-account signatures checked against a JSON-RPC fixture on 127.0.0.1.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { walletHeaders, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { ALICE, BOB, call, errorOf, signedProof, startAccountsGateway, type Answer } from '../../helpers/accounts.js';

const alice = ALICE.address.toLowerCase();

function mint(gw: TestGateway, body: Record<string, unknown>, wallet: string = ALICE.address): Promise<Answer> {
  return call(`${gw.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(wallet), body });
}

function refusal(answer: Answer): [number, string, string] {
  return [answer.status, answer.body?.error?.code, answer.body?.error?.type];
}

describe('SIWE with free mode off', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startAccountsGateway();
  });
  after(() => gw.stop());

  test('a signed proof mints a verified key that works', async () => {
    const proof = await signedProof(gw, ALICE);
    const answer = await mint(gw, { name: 'laptop', message: proof.message, signature: proof.signature });
    assert.equal(answer.status, 200);
    assert.match(answer.body.key, /^sy_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(
      { name: answer.body.name, address: answer.body.address, verified: answer.body.verified, message: answer.body.message },
      {
        name: 'laptop',
        address: alice,
        verified: true,
        message: 'Store this key now: it is shown only once and cannot be retrieved later.',
      },
    );
    const balance = await call(`${gw.url}/credits/balance`, { headers: authHeaders(answer.body.key, alice) });
    assert.deepEqual(balance.body, { address: alice, credits: 0, total_deposited: 0, total_spent: 0 });
  });

  const cases: Array<[string, (gw: TestGateway) => Promise<Answer>, string, string]> = [
    [
      'not a SIWE message',
      async (g) => mint(g, { message: 'hello', signature: '0x00' }),
      'siwe_invalid_message',
      'message is not a valid EIP-4361 (SIWE) message.',
    ],
    [
      'another domain',
      async (g) => {
        const p = await signedProof(g, ALICE, { domain: 'evil.test' });
        return mint(g, { message: p.message, signature: p.signature });
      },
      'siwe_domain_mismatch',
      'SIWE domain must be "switchyard.test", got "evil.test".',
    ],
    [
      'another uri',
      async (g) => {
        const p = await signedProof(g, ALICE, { uri: 'https://evil.test' });
        return mint(g, { message: p.message, signature: p.signature });
      },
      'siwe_uri_mismatch',
      'SIWE uri must be "https://switchyard.test", got "https://evil.test".',
    ],
    [
      'signed for another address than the wallet header',
      async (g) => {
        const p = await signedProof(g, BOB);
        return mint(g, { message: p.message, signature: p.signature }, ALICE.address);
      },
      'siwe_address_mismatch',
      'The SIWE message is signed for another address than x-wallet-address.',
    ],
    [
      'expired',
      async (g) => {
        const p = await signedProof(g, ALICE, { issuedAt: new Date(Date.now() - 120_000), expirationTime: new Date(Date.now() - 1_000) });
        return mint(g, { message: p.message, signature: p.signature });
      },
      'siwe_expired',
      'The SIWE message has expired.',
    ],
    [
      'no expiration time',
      async (g) => {
        const p = await signedProof(g, ALICE, { expirationTime: undefined });
        return mint(g, { message: p.message, signature: p.signature });
      },
      'siwe_expiration_required',
      'The SIWE message must carry an Expiration Time (at most 15 minutes out).',
    ],
    [
      'expiring more than 15 minutes out',
      async (g) => {
        const p = await signedProof(g, ALICE, { expirationTime: new Date(Date.now() + 60 * 60_000) });
        return mint(g, { message: p.message, signature: p.signature });
      },
      'siwe_expiration_too_far',
      'The SIWE Expiration Time may be at most 15 minutes from now.',
    ],
    [
      'not valid yet',
      async (g) => {
        const p = await signedProof(g, ALICE, { notBefore: new Date(Date.now() + 5 * 60_000) });
        return mint(g, { message: p.message, signature: p.signature });
      },
      'siwe_not_yet_valid',
      'The SIWE message is not valid yet (Not Before).',
    ],
    [
      'signed by someone else',
      async (g) => {
        const p = await signedProof(g, ALICE);
        return mint(g, { message: p.message, signature: await BOB.signMessage({ message: p.message }) });
      },
      'siwe_invalid_signature',
      'The signature does not match the address in the SIWE message.',
    ],
    [
      'a signature that is not hex',
      async (g) => {
        const p = await signedProof(g, ALICE);
        return mint(g, { message: p.message, signature: 'zz' });
      },
      'siwe_invalid_signature',
      'signature must be a 0x-prefixed hex string.',
    ],
    [
      'a short hex signature',
      async (g) => {
        const p = await signedProof(g, ALICE);
        return mint(g, { message: p.message, signature: '0x1234' });
      },
      'siwe_invalid_signature',
      'signature must be 65 bytes (an EOA signature) or a smart-account signature.',
    ],
    [
      'a long signature with half a byte',
      async (g) => {
        const p = await signedProof(g, ALICE);
        return mint(g, { message: p.message, signature: `0x${'ab'.repeat(100)}c` });
      },
      'siwe_invalid_signature',
      'signature must be 65 bytes (an EOA signature) or a smart-account signature.',
    ],
    [
      'a smart-account signature without SIWE_RPC_URL',
      async (g) => {
        const p = await signedProof(g, ALICE);
        return mint(g, { message: p.message, signature: `0x${'ab'.repeat(200)}` });
      },
      'unsupported_signature',
      'Smart-account (EIP-1271/6492) signatures need SIWE_RPC_URL on the gateway.',
    ],
    [
      'an unknown nonce',
      async (g) => {
        const p = await signedProof(g, ALICE);
        const message = p.message.replace(p.nonce, 'madeUpNonce12345');
        return mint(g, { message, signature: await ALICE.signMessage({ message }) });
      },
      'siwe_nonce_invalid',
      'The SIWE nonce is unknown, expired or already used; get a new one from GET /auth/nonce.',
    ],
    [
      'a nonce issued to another wallet',
      async (g) => {
        const bobs = await signedProof(g, BOB);
        const p = await signedProof(g, ALICE);
        const message = p.message.replace(p.nonce, bobs.nonce);
        return mint(g, { message, signature: await ALICE.signMessage({ message }) });
      },
      'siwe_nonce_invalid',
      'The SIWE nonce is unknown, expired or already used; get a new one from GET /auth/nonce.',
    ],
    [
      'a replayed proof',
      async (g) => {
        const p = await signedProof(g, ALICE);
        assert.equal((await mint(g, { message: p.message, signature: p.signature })).status, 200);
        return mint(g, { message: p.message, signature: p.signature });
      },
      'siwe_nonce_invalid',
      'The SIWE nonce is unknown, expired or already used; get a new one from GET /auth/nonce.',
    ],
  ];
  for (const [name, attempt, code, message] of cases) {
    test(`refused: ${name} → 401 ${code}`, async () => {
      const answer = await attempt(gw);
      assert.deepEqual(refusal(answer), [401, code, 'authentication_error']);
      assert.equal(answer.body.error.message, message);
    });
  }

  test('a refused proof does not burn its nonce', async () => {
    const wrong = await signedProof(gw, ALICE, { domain: 'evil.test' });
    assert.equal((await mint(gw, { message: wrong.message, signature: wrong.signature })).body.error.code, 'siwe_domain_mismatch');
    const message = wrong.message.replace('evil.test wants you', 'switchyard.test wants you');
    assert.equal((await mint(gw, { message, signature: await ALICE.signMessage({ message }) })).status, 200);
  });

  test('20 concurrent submissions of one proof create exactly one key', async () => {
    const proof = await signedProof(gw, BOB);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => mint(gw, { name: 'race', message: proof.message, signature: proof.signature }, BOB.address)),
    );
    const created = answers.filter((a) => a.status === 200);
    assert.equal(created.length, 1);
    for (const a of answers.filter((x) => x.status !== 200))
      assert.deepEqual(refusal(a), [401, 'siwe_nonce_invalid', 'authentication_error']);
    const list = await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(created[0].body.key, BOB.address) });
    assert.deepEqual(list.body.data.filter((k: { name: string }) => k.name === 'race').length, 1);
  });
});

describe('SIWE nonce expiry and free mode', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startAccountsGateway({ freeMode: true, accounts: { nonceTtlMs: 300 } });
  });
  after(() => gw.stop());

  test('a nonce older than its TTL is refused', async () => {
    const proof = await signedProof(gw, ALICE);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const answer = await mint(gw, { message: proof.message, signature: proof.signature });
    assert.deepEqual(refusal(answer), [401, 'siwe_nonce_invalid', 'authentication_error']);
  });

  test('in free mode a proof is optional but checked when sent; with it the key is verified', async () => {
    const bad = await signedProof(gw, ALICE, { domain: 'evil.test' });
    assert.equal((await mint(gw, { message: bad.message, signature: bad.signature })).body.error.code, 'siwe_domain_mismatch');
    const good = await signedProof(gw, ALICE);
    const answer = await mint(gw, { message: good.message, signature: good.signature });
    assert.equal(answer.body.verified, true);
  });
});

describe('smart-account signatures with SIWE_RPC_URL', () => {
  let rpc: Server;
  /** What the fixture chain answers to eth_call: a 32-byte boolean, or an HTTP 500. */
  let verdict: 'valid' | 'invalid' | 'down' = 'valid';
  const methods: string[] = [];
  let gw: TestGateway;

  before(async () => {
    rpc = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const request = JSON.parse(body) as { id: number; method: string };
        methods.push(request.method);
        if (verdict === 'down') {
          res.writeHead(500).end('boom');
          return;
        }
        const result = request.method === 'eth_chainId' ? '0x1' : `0x${'0'.repeat(63)}${verdict === 'valid' ? '1' : '0'}`;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }));
      });
    });
    await new Promise<void>((resolve) => rpc.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
    gw = await startAccountsGateway({ accounts: { siweRpcUrl: url } });
  });
  after(async () => {
    await gw.stop();
    await new Promise((resolve) => rpc.close(resolve));
  });

  const contractSignature = `0x${'ab'.repeat(200)}`;

  test('the chain says valid → a verified key', async () => {
    verdict = 'valid';
    methods.length = 0;
    const p = await signedProof(gw, ALICE);
    const answer = await mint(gw, { message: p.message, signature: contractSignature });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.verified, true);
    assert.ok(methods.includes('eth_call'), `RPC methods: ${methods.join(',')}`);
  });

  test('the chain says invalid → 401 siwe_invalid_signature', async () => {
    verdict = 'invalid';
    const p = await signedProof(gw, ALICE);
    assert.deepEqual(refusal(await mint(gw, { message: p.message, signature: contractSignature })), [
      401,
      'siwe_invalid_signature',
      'authentication_error',
    ]);
  });

  test('the chain is down → 502 siwe_rpc_unavailable, no retries, nonce kept', async () => {
    verdict = 'down';
    methods.length = 0;
    const p = await signedProof(gw, ALICE);
    const answer = await mint(gw, { message: p.message, signature: contractSignature });
    assert.deepEqual(refusal(answer), [502, 'siwe_rpc_unavailable', 'upstream_error']);
    assert.equal(answer.body.error.message, 'The chain RPC that checks smart-account signatures did not answer.');
    assert.equal(methods.length, 1, `one RPC request, no retry: ${methods.join(',')}`);
    verdict = 'valid';
    assert.equal((await mint(gw, { message: p.message, signature: contractSignature })).status, 200);
  });

  test('an EOA signature is still checked locally, without the chain', async () => {
    verdict = 'down';
    const p = await signedProof(gw, ALICE);
    assert.equal((await mint(gw, { message: p.message, signature: p.signature })).status, 200);
  });
});
