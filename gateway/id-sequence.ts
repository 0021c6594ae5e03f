/**
 * Ids unique across every process and restart without a random draw per id (`randomBytes` is a
 * getrandom system call, ~4 µs here): 72 random bits drawn once per sequence, then a counter.
 * For ids the gateway keeps to itself (holds, chat leases); never for anything a client must not
 * guess.
 *
 * @example
 *   const nextHoldId = idSequence('res_')
 *   nextHoldId() // 'res_3q9V…_0', then 'res_3q9V…_1'
 */
import { randomBytes } from 'node:crypto';

export function idSequence(prefix: string): () => string {
  const start = `${prefix}${randomBytes(9).toString('base64url')}_`;
  let counter = 0;
  return () => `${start}${(counter++).toString(36)}`;
}
