/**
 * Our own fuzz test (issue 37): malformed requests to every operation `/openapi.json` lists, in
 * free mode and with credits on, generated from a fixed seed by test/helpers/malformed-requests.ts
 * (fast-check; FUZZ_SEED=n explores another seed). Each answer is checked against the document the
 * gateway serves: no 5xx; a 4xx is a status its operation documents, in the body documented for it
 * (a route with its own error shape, as /mcp's JSON-RPC errors, declares it there, and is checked
 * by it); no answer holds a stack trace, a file path or a key. Afterwards the gateway is healthy,
 * logged no error, and every wallet's ledger is exact: its grants, less what the answers said they
 * cost.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { apiKeyFor, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { fixtureServer, runnableEnv } from '../tools/fixture-servers.js';
import { rawExchange, type RawAnswer } from '../../helpers/raw-http.js';
import {
  headerOf,
  malformedRequests,
  operationsOf,
  wire,
  type MalformedRequest,
  type Operation,
} from '../../helpers/malformed-requests.js';
import { TOOL_EXECUTION_CREDITS } from '../../../gateway/pricing.js';

type Json = Record<string, any>;

const SEED = Number(process.env.FUZZ_SEED ?? 37);
/** Random cases per operation beyond one of each kind (23 kinds). */
const EXTRA_PER_OPERATION = 6;
const BODY_LIMIT_BYTES = 1024 * 1024;
const ADMIN_TOKEN = 'fuzz-admin-token-0a1b2c3d4e5f';
const UPSTREAM_KEY = 'upstream-secret-0a1b2c3d4e5f';
/** Every wallet's grant before the run. */
const GRANT = 1000;
/** Requests in flight at once. */
const PARALLEL = 8;
/** A wallet no operation calls with, which the wallet mutations name (the EIP-55 form of 0x…dead). */
const STRANGER = '0x000000000000000000000000000000000000dead';

/** Statuses a request that is no operation's (another method, another path) may get. */
const OFF_ROUTE_STATUSES = [400, 404, 405, 408, 417, 431];

/** What must never be in an answer: the internals of a failure, or anybody's key. */
const LEAKS: Array<[RegExp, string]> = [
  [/\n\s+at \S[^\n]*:\d+:\d+/, 'a stack trace'],
  [/(?:^|[\s"'(=:])(?:\/(?:work|home|root|tmp|usr|opt|var|proc)\/|file:\/\/)/, 'a file path'],
  [/node_modules|\.(?:ts|js|mjs|cjs):\d+:\d+/, 'a source location'],
  [/sy_[A-Za-z0-9_-]{20,}/, 'an API key'],
];

for (const mode of ['free mode', 'credits on'] as const) {
  describe(`malformed requests to every operation (${mode})`, () => {
    let upstream: ScriptedUpstream;
    let gateway: TestGateway;
    let operations: Operation[];
    let resolved: Json;
    /** Each operation's caller: a wallet of its own (so each ledger is checked alone) and its key. */
    const callers = new Map<string, { wallet: string; key: string }>();

    before(async () => {
      upstream = await startScriptedUpstream();
      gateway = await startTestGateway({
        env: runnableEnv({ UPSTREAM_API_KEY: UPSTREAM_KEY, BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES) }),
        config: (json) => {
          json.freeMode = mode === 'free mode';
          json.adminToken = ADMIN_TOKEN;
          json.logLevel = 'info';
          for (const model of json.models as Array<{ upstream: Record<string, unknown> }>) model.upstream.baseUrl = upstream.baseUrl;
          json.mcpServers = { echo: fixtureServer('echo') };
          json.limits = {
            perIp: { points: 1_000_000, durationSec: 60 },
            perWallet: { points: 1_000_000, durationSec: 60 },
            chatConcurrencyPerWallet: 64,
          };
        },
      });
      const validator = new Validator();
      const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as Json;
      assert.deepEqual((await validator.validate(document)).errors, undefined);
      resolved = validator.resolveRefs() as Json;
      operations = operationsOf(resolved);
      for (const [i, operation] of operations.entries()) {
        const wallet = `0x${(i + 1).toString(16).padStart(40, '0')}`;
        callers.set(operation.id, { wallet, key: await apiKeyFor(gateway, wallet, 'fuzz') });
      }
      for (const wallet of [...[...callers.values()].map((c) => c.wallet), STRANGER]) {
        await gateway.ledger.grant(wallet, GRANT, `fuzz grant ${wallet}`);
      }
    });
    after(async () => {
      await gateway?.stop();
      await upstream?.close();
    });

    test(`every operation: no 5xx, each 4xx documented and in its documented body, nothing leaked; then healthy, the ledger exact`, async (t) => {
      const cases = malformedRequests(operations, {
        seed: SEED,
        extra: EXTRA_PER_OPERATION,
        bodyLimitBytes: BODY_LIMIT_BYTES,
        credentialsFor: (operation) => {
          const caller = callers.get(operation.id)!;
          return { walletAddress: caller.wallet, bearerKey: caller.key, adminToken: ADMIN_TOKEN };
        },
      });
      assert.ok(operations.length >= 20, `${operations.length} operations in /openapi.json`);
      for (const operation of operations) {
        const count = cases.filter((c) => c.operation === operation).length;
        assert.ok(count >= 20, `${operation.id}: ${count} cases`);
      }

      const started = performance.now();
      const answers = await exchangeAll(gateway.url, cases);
      const statuses = new Map<string, number>();
      for (const answer of answers)
        statuses.set(String(answer?.status ?? 'none'), (statuses.get(String(answer?.status ?? 'none')) ?? 0) + 1);
      const counts = [...statuses].sort().map(([status, n]) => `${status}×${n}`);
      t.diagnostic(`${cases.length} requests (seed ${SEED}) in ${Math.round(performance.now() - started)} ms: ${counts.join(' ')}`);

      const check = answerChecker(resolved, operations, [ADMIN_TOKEN, UPSTREAM_KEY, ...[...callers.values()].map((c) => c.key)]);
      const problems = cases.flatMap((request, i) => check(request, answers[i]).map((problem) => `${describeCase(request)} → ${problem}`));
      assert.deepEqual(problems.slice(0, 40), [], `${problems.length} problems`);

      const health = await fetch(`${gateway.url}/health`);
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as Json).status, 'ok');
      const failures = gateway.logs.filter((line) => Number(line.level) >= 50 || Number(line.status) >= 500);
      assert.deepEqual(failures.slice(0, 5), [], 'no error in the log');

      // The ledger: every wallet holds its grants, less exactly what the answers said they cost.
      const expected = new Map<string, { granted: number; charged: number }>();
      for (const wallet of [...[...callers.values()].map((c) => c.wallet), STRANGER]) expected.set(wallet, { granted: GRANT, charged: 0 });
      const grantKeys = new Set<string>();
      cases.forEach((request, i) => {
        const answer = answers[i];
        if (!answer || answer.status !== 200) return;
        const wallet = headerOf(request, 'x-wallet-address')?.toLowerCase() ?? '';
        const charged = mode === 'free mode' ? 0 : chargedBy(request, answer, operations);
        if (charged > 0) {
          assert.ok(expected.has(wallet), `${describeCase(request)} charged ${charged} to ${wallet}`);
          expected.get(wallet)!.charged += charged;
        }
        const grant = grantIn(request, answer, operations);
        if (grant && !grantKeys.has(grant.idempotencyKey)) {
          grantKeys.add(grant.idempotencyKey);
          expected.get(grant.address)!.granted += grant.amount;
        }
      });
      if (mode === 'free mode') {
        const headers = answers.filter((answer) => answer?.headers['x-credits-charged'] !== undefined);
        assert.equal(headers.length, 0, 'free mode reports no charge');
      }
      for (const [wallet, { granted, charged }] of expected) {
        const res = await fetch(`${gateway.url}/admin/credits/${wallet}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        const balance = (await res.json()) as Json;
        assert.deepEqual(
          { deposited: balance.total_deposited, spent: balance.total_spent, credits: balance.credits },
          { deposited: granted, spent: charged, credits: granted - charged },
          wallet,
        );
      }
    });
  });
}

/** Send every request, PARALLEL at a time; the answers in the same order. */
async function exchangeAll(url: string, cases: MalformedRequest[]): Promise<Array<RawAnswer | undefined>> {
  const answers: Array<RawAnswer | undefined> = new Array(cases.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < cases.length) {
        const i = next++;
        answers[i] = await rawExchange(url, wire(cases[i]));
      }
    }),
  );
  return answers;
}

function describeCase(request: MalformedRequest): string {
  const sent = wire(request).subarray(0, 160).toString('latin1').replaceAll('\r\n', '\\r\\n');
  return `${request.operation.id} [${request.kind}] ${JSON.stringify(sent)}`;
}

/** The method and path the gateway routes the request by, as sent. */
function requestLine(request: MalformedRequest): { method: string; pathname: string } | undefined {
  const line = request.raw
    ? request.raw
        .subarray(0, Math.max(0, request.raw.indexOf('\n')))
        .toString('latin1')
        .trim()
    : `${request.method} ${request.target}`;
  // As Node's parser reads it: spaces may repeat; an absolute-form target's path is what routes.
  const [method, target] = line.split(/ +/);
  if (!method || !target) return undefined;
  return { method, pathname: target.replace(/^[a-z]+:\/\/[^/]*/i, '').split('?')[0] };
}

/** The operation the request reaches (HEAD reaches GET's), as the router matches paths: any case, a trailing slash. */
function operationOf(request: MalformedRequest, operations: Operation[]): Operation | undefined {
  const line = requestLine(request);
  if (!line) return undefined;
  const method = line.method === 'HEAD' ? 'GET' : line.method;
  return operations.find(
    (operation) => operation.method === method && new RegExp(operation.pattern.source.replace(/\$$/, '/?$'), 'i').test(line.pathname),
  );
}

/** Checks one answer: the problems found, none when all is well. */
function answerChecker(resolved: Json, operations: Operation[], secrets: string[]) {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  const validators = new Map<unknown, ValidateFunction>();
  const validate = (schema: Json, body: unknown): string | undefined => {
    let validator = validators.get(schema);
    if (!validator) validators.set(schema, (validator = ajv.compile(schema)));
    return validator(body) ? undefined : ajv.errorsText(validator.errors);
  };
  return function check(request: MalformedRequest, answer: RawAnswer | undefined): string[] {
    if (!answer) return ['the connection closed without an answer'];
    const problems: string[] = [];
    const { status } = answer;
    const text = answer.body.toString('utf8');
    if (status >= 500) problems.push(`${status}: ${text.slice(0, 300)}`);
    const everything = `${Object.entries(answer.headers)
      .map(([n, v]) => `${n}: ${v}`)
      .join('\n')}\n\n${text}`;
    for (const secret of secrets) if (everything.includes(secret)) problems.push(`${status} holds a secret (${secret.slice(0, 6)}…)`);
    const json = /^application\/json/.test(answer.headers['content-type'] ?? '');
    // A page, a script or a stylesheet is what it is; a minted key is the caller's own.
    const operation = operationOf(request, operations);
    const mintedKey = status === 200 && operation?.id === 'POST /auth/api-keys';
    if (status >= 300 || json) {
      for (const [pattern, what] of LEAKS) {
        if (what === 'an API key' && mintedKey) continue;
        if (pattern.test(everything)) problems.push(`${status} holds ${what}: ${everything.match(pattern)?.[0]}`);
      }
    }
    if (status < 400 || status >= 500 || requestLine(request)?.method === 'HEAD') return problems;
    if (!json) return [...problems, `${status} is not JSON: ${answer.headers['content-type']} ${text.slice(0, 200)}`];
    if (answer.body.length > 4096) problems.push(`${status} error body of ${answer.body.length} bytes (echoes are cut at 200 characters)`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return [...problems, `${status} body is not JSON: ${text.slice(0, 200)}`];
    }
    const documented = operation?.spec.responses?.[status]?.content?.['application/json']?.schema as Json | undefined;
    if (operation && !documented) problems.push(`${status} is not documented for ${operation.id}: ${text.slice(0, 200)}`);
    if (!operation && !OFF_ROUTE_STATUSES.includes(status)) problems.push(`${status} off any route: ${text.slice(0, 200)}`);
    const schema = documented ?? offRouteBody(resolved, requestLine(request)?.pathname);
    const wrong = validate(schema, body);
    if (wrong) problems.push(`${status} body is not the documented one (${wrong}): ${text.slice(0, 200)}`);
    return problems;
  };
}

/**
 * The body of an error no operation describes: the document's `x-error-bodies-by-path` entry
 * whose path is this one or above it (any case, as the gateway matches it), else ErrorBody.
 */
function offRouteBody(resolved: Json, pathname: string | undefined): Json {
  let path = pathname ?? '';
  try {
    path = decodeURIComponent(path);
  } catch {
    // not decodable: as sent
  }
  path = path.toLowerCase();
  const entries = (resolved['x-error-bodies-by-path'] ?? []) as Array<{ path: string; schema: Json }>;
  const entry = entries.find((e) => path === e.path || path.startsWith(`${e.path}/`));
  return entry?.schema ?? (resolved.components.schemas.ErrorBody as Json);
}

/** What a successful answer says it cost: its header, its stream's last word, or the price of a tool run. */
function chargedBy(request: MalformedRequest, answer: RawAnswer, operations: Operation[]): number {
  const header = answer.headers['x-credits-charged'];
  if (header !== undefined) return Number(header);
  const text = answer.body.toString('utf8');
  const operation = operationOf(request, operations)?.id;
  if (/^text\/event-stream/.test(answer.headers['content-type'] ?? '')) {
    // A chat's finish chunk carries `credits`; a response's terminal event carries `response.credits`.
    const events = text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice('data: '.length)) as Json);
    return events.reduce((sum, event) => sum + Number(event.credits?.charged ?? event.response?.credits?.charged ?? 0), 0);
  }
  if (operation === 'POST /v1/tools/execute') return TOOL_EXECUTION_CREDITS;
  if (operation === 'POST /mcp' && text) {
    const messages = [JSON.parse(text) as Json].flat() as Json[];
    const toolRuns = messages.filter((m) => Array.isArray(m.result?.content) && m.result.isError !== true);
    return toolRuns.length * TOOL_EXECUTION_CREDITS;
  }
  return 0;
}

/** A grant the admin route made: whom, how much, under which Idempotency-Key (a repeat grants nothing). */
function grantIn(request: MalformedRequest, answer: RawAnswer, operations: Operation[]) {
  if (operationOf(request, operations)?.id !== 'POST /admin/credits/grant') return undefined;
  const body = JSON.parse(answer.body.toString('utf8')) as Json;
  return { address: String(body.address), amount: Number(body.granted), idempotencyKey: headerOf(request, 'idempotency-key') ?? '' };
}
