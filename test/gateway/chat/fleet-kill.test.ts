/**
 * Issue 38: a replica process killed (SIGKILL) while chats stream through it. Three replicas run
 * as their own processes (vLLM's, SGLang's and Ollama's wire formats, each event a few
 * milliseconds apart); 36 chats with a tool round each, half streamed, run at once; once the
 * victim has taken its share of calls it is killed. Every non-streamed chat answers; a streamed
 * chat may fail only after it had shown content.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import type { ReplicaServer } from '../../fixtures/upstreams/replica.js';
import { ask, chat, deploymentsOf, fleetGateway, type Answer } from './fleet-harness.js';

/** A replica in its own process: its URL, and a promise per count of chat requests it has seen. */
interface ReplicaProcess {
  child: ChildProcess;
  baseUrl: string;
  requested(count: number): Promise<void>;
}

const children: ChildProcess[] = [];
let gateway: TestGateway | undefined;

after(async () => {
  await gateway?.stop();
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function replicaProcess(server: ReplicaServer, paceMs: number): Promise<ReplicaProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/upstreams/replica.ts', server, String(paceMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let seen = 0;
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const lines = createInterface({ input: child.stdout! });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`replica ${server} exited with ${code}`)));
    lines.on('line', (line) => {
      const [word, value] = line.split(' ');
      if (word === 'ready') resolve(value);
      if (word !== 'request') return;
      seen = Number(value);
      for (const w of waiting.filter((x) => x.count <= seen)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  return {
    child,
    baseUrl,
    requested: (count) => (seen >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
  };
}

test('a replica killed with SIGKILL under load: no non-streamed chat fails, and no streamed chat that had shown nothing', async () => {
  const [a, victim, c] = await Promise.all([replicaProcess('vllm-hermes', 3), replicaProcess('sglang', 3), replicaProcess('ollama', 3)]);
  gateway = await fleetGateway([
    { name: 'gpu-a', replica: a },
    { name: 'gpu-b', replica: victim },
    { name: 'gpu-c', replica: c },
  ]);
  const chats: Array<Promise<Answer & { streamed: boolean }>> = [];
  for (let i = 0; i < 36; i++) {
    const streamed = i % 2 === 1;
    const wallet = `0x${(i + 1).toString(16).padStart(40, '0')}`;
    const body = { ...ask(`load ${i}: What time is it in Paris?`), ...(streamed ? { stream: true } : {}) };
    chats.push(chat(gateway, body, walletHeaders(wallet)).then((answer) => ({ ...answer, streamed })));
  }
  // Under load: the victim has taken several calls, and others are on their way.
  await victim.requested(6);
  victim.child.kill('SIGKILL');
  const answers = await Promise.all(chats);

  const failed = answers.filter((x) => x.status !== 200 || x.error);
  for (const answer of answers.filter((x) => !x.streamed)) {
    assert.equal(answer.status, 200, JSON.stringify(answer.error));
    assert.match(answer.content, /Il est 14 h 05 à Paris/);
  }
  for (const answer of answers.filter((x) => x.streamed && x.error)) {
    assert.equal(answer.contentBeforeError, true, `a streamed chat failed before showing anything: ${JSON.stringify(answer.error)}`);
  }
  assert.ok(failed.length < answers.length / 2, `${failed.length} of ${answers.length} failed`);
  // The killed replica counts its refused connections; the others served on.
  const states = await deploymentsOf(gateway);
  assert.deepEqual(
    states.map((d) => [d.name, d.outstanding]),
    [
      ['gpu-a', 0],
      ['gpu-b', 0],
      ['gpu-c', 0],
    ],
  );
  assert.ok(gateway.logs.some((l) => l.msg === 'upstream call failed' && l.deployment === 'gpu-b' && l.next === 'fail-over'));
});
