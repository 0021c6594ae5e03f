/**
 * kill -9 under paid load, then a restart on the same DATA_DIR: the ledger is exact. Every charge a
 * client saw answered (x-credits-charged) is in total_spent; total_spent exceeds them by at most the
 * charges of requests in flight at the kill; and credits + total_spent == total_deposited (the
 * killed process's holds came back with the restart); and the usage records equal the charges,
 * one per charged chat, adding up to total_spent (each written in its charge's commit). The built
 * gateway runs as `npm start` runs it, with no tool servers, against a zero-latency upstream in
 * this process: in embedded mode (a restart on the same DATA_DIR), and in cluster mode (a restart
 * on the same PostgreSQL database).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { startBuiltGateway, type BuiltGateway } from '../spawn-built-gateway.js';
import { ADMIN_TOKEN, ALICE, PUBLIC_URL, mintVerifiedKey } from '../../helpers/accounts.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';

const services = await clusterServices();

const dir = mkdtempSync(join(tmpdir(), 'sy-kill-'));
const running: BuiltGateway[] = [];
after(async () => {
  for (const gateway of running) await gateway.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test('kill -9 under paid load loses no charge a client saw, and the totals add up after restart', () => killUnderLoad({}));

test(
  'cluster mode: kill -9 under paid load, restart on the same PostgreSQL: the same, with every usage record',
  { skip: services.skip },
  async () => {
    const database = await freshDatabase();
    try {
      await killUnderLoad({ DATABASE_URL: database.url });
    } finally {
      await database.drop();
    }
  },
);

async function killUnderLoad(modeEnv: Record<string, string>): Promise<void> {
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: 'zero',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 400, completion_tokens: 400, total_tokens: 800 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const runDir = mkdtempSync(join(dir, 'run-'));
  const configPath = join(runDir, 'gateway.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      freeMode: false,
      adminToken: ADMIN_TOKEN,
      server: { publicUrl: PUBLIC_URL },
      limits: {
        perIp: { points: 1_000_000, durationSec: 60 },
        perWallet: { points: 1_000_000, durationSec: 60 },
        chatConcurrencyPerWallet: 64,
      },
      models: [{ id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: upstreamUrl, model: 'zero' } }],
      mcpServers: {},
    }),
  );
  const dataDir = join(runDir, 'data');
  const env = { SWITCHYARD_CONFIG: configPath, DATA_DIR: dataDir, ...modeEnv };
  const wallet = ALICE.address.toLowerCase();
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  try {
    const first = await startBuiltGateway(env);
    running.push(first);
    const key = await mintVerifiedKey(first, ALICE);
    const granted = await fetch(`${first.url}/admin/credits/grant`, {
      method: 'POST',
      headers: { ...admin, 'idempotency-key': `kill-test-${Object.keys(modeEnv).join()}` },
      body: JSON.stringify({ address: wallet, amount: 1_000_000 }),
    });
    assert.equal(granted.status, 200);

    const agent = new Agent({ connections: 32 });
    let seen = 0;
    let answered = 0;
    let inFlight = 0;
    let inFlightAtKill = -1;
    let killed = false;
    /** Resolved once enough chats were answered that the kill lands under load. */
    let underLoad!: () => void;
    const loaded = new Promise<void>((resolve) => (underLoad = resolve));
    const body = JSON.stringify({ model: 'conductor', messages: [{ role: 'user', content: 'hi' }] });
    const headers = { 'content-type': 'application/json', 'x-wallet-address': wallet, authorization: `Bearer ${key}` };
    const worker = async () => {
      while (!killed) {
        inFlight++;
        try {
          const res = await request(`${first.url}/v1/chat/completions`, { method: 'POST', headers, body, dispatcher: agent });
          const text = await res.body.text();
          if (res.statusCode === 200) {
            // Counted only once the whole answer arrived: that is what "a client saw answered" means.
            JSON.parse(text);
            seen += Number(res.headers['x-credits-charged']);
            answered++;
            if (answered === 200) underLoad();
          }
        } catch {
          // Cut off by the kill: in flight, not seen.
        } finally {
          inFlight--;
        }
      }
    };
    const workers = Array.from({ length: 32 }, worker);
    await loaded;
    inFlightAtKill = inFlight;
    killed = true;
    first.child.kill('SIGKILL');
    await first.exited;
    await Promise.all(workers);
    await agent.close();
    assert.ok(answered > 50, `only ${answered} chats answered before the kill`);

    const second = await startBuiltGateway(env);
    running.push(second);
    const balance = (await (await fetch(`${second.url}/admin/credits/${wallet}`, { headers: admin })).json()) as {
      credits: number;
      total_deposited: number;
      total_spent: number;
    };
    // Each chat costs ceil((400 + 2 × 400) / 1000) = 2 credits.
    assert.equal(balance.total_deposited, 1_000_000);
    assert.equal(balance.credits + balance.total_spent, balance.total_deposited, 'no credit lost or held');
    assert.ok(balance.total_spent >= seen, `spent ${balance.total_spent} < ${seen} seen by clients`);
    assert.ok(
      balance.total_spent - seen <= 2 * inFlightAtKill,
      `spent ${balance.total_spent}, seen ${seen}: more than the ${inFlightAtKill} requests in flight could charge`,
    );
    // The usage records: one per charged chat (2 credits each), their credits adding up to total_spent; the grant's to total_deposited.
    const totals = (await (await fetch(`${second.url}/admin/credits/${wallet}/usage?group_by=model`, { headers: admin })).json()) as {
      data: Array<{ group: string | null; records: number; spent: number; added: number }>;
    };
    const chats = totals.data.find((t) => t.group === 'svc-32b-conductor');
    assert.ok(chats, 'the chats wrote records');
    assert.equal(chats.spent, balance.total_spent, 'usage records equal the charges');
    assert.equal(chats.records * 2, balance.total_spent, 'one record per charged chat');
    assert.deepEqual(
      totals.data.filter((t) => t.group === null).map((t) => [t.records, t.added]),
      [[1, 1_000_000]],
    );
    const ids = new Set<string>();
    let cursor = '';
    for (;;) {
      const page = (await (
        await fetch(`${second.url}/admin/credits/${wallet}/usage?kind=chat&limit=200${cursor}`, { headers: admin })
      ).json()) as { data: Array<{ request_id: string }>; next_cursor: string | null };
      for (const record of page.data) ids.add(record.request_id);
      if (!page.next_cursor) break;
      cursor = `&cursor=${page.next_cursor}`;
    }
    assert.equal(ids.size, chats.records, 'each record is a distinct request');
  } finally {
    upstream.close();
  }
}
