import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestGateway, walletHeaders, type TestGateway } from '../../../helpers/gateway.js';

const ADMIN_TOKEN = 'metrics-admin-token-0123';
const gateways: TestGateway[] = [];
after(() => Promise.all(gateways.map((g) => g.stop())));

/** The `switchyard_http_requests_total` samples as "method route status" → count. */
function requestCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^switchyard_http_requests_total\{method="([^"]*)",route="([^"]*)",status="([^"]*)"\} (\d+)$/gm)) {
    counts.set(`${match[1]} ${match[2]} ${match[3]}`, Number(match[4]));
  }
  return counts;
}

test('GET /metrics is open without ADMIN_TOKEN and needs no wallet; labels are route templates', async () => {
  const gateway = await startTestGateway();
  gateways.push(gateway);
  for (let i = 0; i < 3; i++) assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() })).status, 200);
  // A scan of random paths adds only the `unmatched` label, however many paths it tries.
  const scanned: string[] = [];
  for (let i = 0; i < 25; i++) {
    const path = `/scan-${randomUUID()}/admin.php`;
    scanned.push(path);
    assert.equal((await fetch(`${gateway.url}${path}`)).status, 404);
  }
  assert.equal((await fetch(`${gateway.url}/v1/models`, { method: 'DELETE', headers: walletHeaders() })).status, 405);

  const res = await fetch(`${gateway.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const counts = requestCounts(text);
  assert.equal(counts.get('GET /v1/models 200'), 3);
  assert.equal(counts.get('GET unmatched 404'), 25);
  assert.equal(counts.get('DELETE unmatched 405'), 1);
  for (const path of scanned) assert.equal(text.includes(path.slice(1, 20)), false, 'raw paths never become labels');
  assert.deepEqual([...new Set([...counts.keys()].map((k) => k.split(' ')[1]))].sort(), ['/v1/models', 'unmatched']);
  assert.match(text, /^switchyard_http_request_duration_seconds_count\{method="GET",route="\/v1\/models",status="200"\} 3$/m);
  assert.match(text, /^switchyard_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="unmatched",status="404"\} 25$/m);
  assert.match(text, /^switchyard_process_cpu_seconds_total /m); // default process metrics are there too

  // The scrape itself is counted (after it is answered) under its own template.
  const again = requestCounts(await (await fetch(`${gateway.url}/metrics`)).text());
  assert.equal(again.get('GET /metrics 200'), 1);
});

test('with ADMIN_TOKEN set, /metrics needs it as a Bearer token', async () => {
  const gateway = await startTestGateway({ env: { ADMIN_TOKEN } });
  gateways.push(gateway);
  const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: ADMIN_TOKEN }];
  for (const headers of attempts) {
    const res = await fetch(`${gateway.url}/metrics`, { headers });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), {
      error: {
        message: 'A valid admin Bearer token is required.',
        type: 'authentication_error',
        code: 'invalid_admin_token',
        param: null,
      },
    });
  }
  const ok = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(ok.status, 200);
  assert.match(await ok.text(), /switchyard_http_requests_total\{method="GET",route="\/metrics",status="401"\} 3/);
});
