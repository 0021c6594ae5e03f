/**
 * Where a process's CPU went, from a V8 `.cpuprofile` (`node --cpu-prof`, or bench/chat-overhead.ts
 * `--cpu-prof <dir>`): self time summed per function and per place (a gateway file, a package in
 * node_modules, Node's internals, the garbage collector), as shares of the busy time (the profile's
 * samples less `(idle)` and `(program)`). Shares, not times: on a loaded machine they are what stays
 * comparable from one profile to the next. A second profile prints beside the first, as before and after.
 *
 * Samples count from the first one inside the `--from` function (default parseChatRequest: the
 * first chat request; a path with a `/` names a file instead), so start-up is left out.
 *
 * `--requests N[,M]` (the requests each process served, which bench/chat-overhead.ts prints with
 * `--cpu-prof`) turns shares into µs per request.
 *
 *   npx tsx bench/profile-summary.ts CPU.before.cpuprofile [CPU.after.cpuprofile] [--top 40] [--match gateway/chat] [--from file] [--requests N,M]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

interface Summary {
  busyMs: number;
  byFunction: Map<string, number>;
  byPlace: Map<string, number>;
}

/** A file's place: the gateway's own path, a package, or Node itself. */
function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return 'node internals';
  const dist = url.indexOf('/dist/');
  return dist === -1 ? url.replace(/^file:\/\//, '') : url.slice(dist + '/dist/'.length);
}

function summarize(path: string, from: string): Summary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // Start-up (compiling modules, registering routes, spawning tool servers) is no request's cost:
  // count from the first sample taken inside the `from` function (its name, or its file).
  const parents = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);
  const inside = (id: number | undefined): boolean => {
    for (; id !== undefined; id = parents.get(id)) {
      const { functionName, url } = nodes.get(id)!.callFrame;
      if (functionName === from || (from.includes('/') && url.includes(from))) return true;
    }
    return false;
  };
  const first = profile.samples.findIndex((id) => inside(id));
  if (first === -1) throw new Error(`${path}: no sample inside ${from} (give --from)`);
  for (let i = first; i < profile.samples.length; i++) {
    // A sample's time is the delta to the next sample.
    const delta = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + delta);
  }
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    busy += us;
    const place = placeOf(url, functionName);
    const fn = `${functionName || '(anonymous)'} ${place}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  return { busyMs: busy / 1000, byFunction, byPlace };
}

/** Shares of busy time in %, or (given the requests each profile's process served) µs per request. */
function table(
  title: string,
  summaries: Summary[],
  pick: (s: Summary) => Map<string, number>,
  top: number,
  match?: string,
  requests?: number[],
): void {
  const shares = summaries.map(
    (s, i) => new Map([...pick(s)].map(([k, us]) => [k, requests ? us / requests[i] : (us / 1000 / s.busyMs) * 100])),
  );
  const unit = requests ? 'µs' : '%';
  const names = new Set<string>();
  for (const m of shares) for (const k of m.keys()) if (!match || k.includes(match)) names.add(k);
  const rows = [...names].sort((x, y) => (shares[0].get(y) ?? 0) - (shares[0].get(x) ?? 0)).slice(0, top);
  console.log(`\n${title} (${requests ? 'µs per request' : '% of busy time'}${summaries.length > 1 ? ': first profile, second' : ''})`);
  for (const name of rows) {
    const cells = shares.map((m) => `${(m.get(name) ?? 0).toFixed(1).padStart(6)}${unit}`).join(' ');
    console.log(`${cells}  ${name}`);
  }
}

const args = process.argv.slice(2);
const valueOf = (flag: string) => {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args.splice(at, 2)[1];
};
const top = Number(valueOf('--top') ?? 30);
const match = valueOf('--match');
const from = valueOf('--from') ?? 'parseChatRequest';
const requests = valueOf('--requests')?.split(',').map(Number);
const summaries = args.map((path) => summarize(path, from));
if (requests && requests.length !== summaries.length) throw new Error('--requests takes one count per profile, comma-separated');
summaries.forEach((s, i) =>
  console.log(
    `${args[i]}: ${s.busyMs.toFixed(0)} ms busy${requests ? `, ${((s.busyMs * 1000) / requests[i]).toFixed(0)} µs per request` : ''}`,
  ),
);
table('by place', summaries, (s) => s.byPlace, top, match, requests);
table('by function', summaries, (s) => s.byFunction, top, match, requests);
