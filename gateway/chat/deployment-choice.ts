/**
 * Which deployment of a model takes an upstream call. Candidates are the healthy deployments of
 * the lowest priority that has any (a higher number is the fallback: a hosted provider behind
 * self-hosted GPUs). Among them a conversation goes where rendezvous hashing sends its key, so its
 * rounds find the prefix that deployment already computed, unless that deployment has more than
 * `imbalance` calls outstanding beyond the least loaded candidate: then, as for a call with no
 * conversation, the least loaded by outstanding ÷ weight takes it, ties broken by the hash. A
 * pure function, tested with tables.
 *
 * @example
 *   const { chosen, movedFrom } = chooseDeployment(deployments, key, { imbalance: 4, keyed: true })
 */
import { rendezvousScore } from './rendezvous.js';

export interface Candidate {
  /** From deploymentSeed(model, name). */
  seed: number;
  weight: number;
  priority: number;
  /** Calls this instance has sent it that have not ended. */
  outstanding: number;
  /** Neither down (its probe failed) nor cooling down. */
  healthy: boolean;
}

export interface ChoiceOptions<C> {
  imbalance: number;
  /** `key` is a conversation's (else a random tie-breaker): keep the conversation where its hash sends it. */
  keyed: boolean;
  /** Not this one (the deployment the call just failed on). */
  exclude?: C;
}

export interface Choice<C> {
  /** Undefined when no deployment is healthy (besides the excluded one). */
  chosen?: C;
  /** The conversation's own deployment, when it was passed over for a less loaded one. */
  movedFrom?: C;
}

export function chooseDeployment<C extends Candidate>(candidates: readonly C[], key: number, options: ChoiceOptions<C>): Choice<C> {
  let tier = Infinity;
  for (const c of candidates) if (c !== options.exclude && c.healthy && c.priority < tier) tier = c.priority;
  let byHash: C | undefined;
  let byHashScore = -Infinity;
  let leastLoaded: C | undefined;
  let leastLoadedScore = -Infinity;
  let fewest = Infinity;
  for (const c of candidates) {
    if (c === options.exclude || c.priority !== tier || !c.healthy) continue;
    const score = rendezvousScore(key, c.seed, c.weight);
    if (score > byHashScore) {
      byHash = c;
      byHashScore = score;
    }
    if (c.outstanding < fewest) fewest = c.outstanding;
    // outstanding ÷ weight, compared without dividing; equal loads go to the higher score.
    const order = leastLoaded === undefined ? -1 : c.outstanding * leastLoaded.weight - leastLoaded.outstanding * c.weight;
    if (order < 0 || (order === 0 && score > leastLoadedScore)) {
      leastLoaded = c;
      leastLoadedScore = score;
    }
  }
  if (byHash === undefined) return {};
  if (options.keyed && byHash.outstanding - fewest <= options.imbalance) return { chosen: byHash };
  return { chosen: leastLoaded, movedFrom: options.keyed && leastLoaded !== byHash ? byHash : undefined };
}
