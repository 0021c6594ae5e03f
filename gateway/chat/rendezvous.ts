/**
 * Weighted rendezvous (highest random weight) hashing: every deployment scores a key, the highest
 * score takes it. The score depends only on the key, the deployment's seed and its weight, so every
 * gateway instance sends a conversation to the same deployment with nothing shared between them;
 * a deployment that leaves moves only its own keys (each to its next-highest scorer), and one
 * of weight w takes w/Σw of all keys (the -w / ln(u) form of Schindelhauer and Schomaker's
 * weighted distributed hash tables, as in Resch's "weighted rendezvous hashing").
 *
 * @example
 *   const seed = deploymentSeed('svc-32b-conductor', 'gpu-a')
 *   rendezvousScore(key, seed, 2) > rendezvousScore(key, otherSeed, 1) // for about 2/3 of keys
 */
import { createHash } from 'node:crypto';

/** A deployment's fixed hash input, from the model and deployment names (never the URL: it may hold a secret or differ per instance). */
export function deploymentSeed(modelId: string, name: string): number {
  return createHash('sha256').update(`${modelId}\n${name}`).digest().readUInt32BE(0);
}

/** The score of `key` (a uint32) on the deployment `seed` of weight `weight`; higher wins. */
export function rendezvousScore(key: number, seed: number, weight: number): number {
  // A uniform draw in (0, 1) from the pair, then the weighted form: P(win) ∝ weight.
  const u = (mix32(key ^ seed) + 0.5) / 4_294_967_296;
  return -weight / Math.log(u);
}

/** MurmurHash3's 32-bit finalizer: every input bit flips each output bit with probability about 1/2. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
