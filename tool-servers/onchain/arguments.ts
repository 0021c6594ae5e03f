/** Argument schemas and parsers shared by the on-chain tools. */
import { getAddress, isAddress, isHash, type Address, type Hash } from 'viem';
import { z } from 'zod';
import { ToolError } from '../kit/index.js';

export const chainArgument = z
  .union([z.string().min(1).max(64), z.number().int().positive()])
  .optional()
  .describe('Chain name, alias or numeric id (default "ethereum"), e.g. "base", "arb", 137.');

export const addressArgument = z.string().min(1).max(255).describe('A 0x address (EIP-55 checksum if mixed case).');

export const addressOrNameArgument = z
  .string()
  .min(1)
  .max(255)
  .describe('A 0x address (EIP-55 checksum if mixed case) or an ENS name such as "vitalik.eth".');

export const hexAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

/**
 * A 0x address, checksummed. Mixed case must pass the EIP-55 checksum.
 *
 * @example
 *   parseAddress('0xd8da6bf26964af9d7eed9e03e53415d37aa96045', 'address') // '0xd8dA6BF2…'
 */
export function parseAddress(value: string, param: string): Address {
  const trimmed = value.trim();
  if (!isAddress(trimmed)) {
    const reason = /^0x[0-9a-fA-F]{40}$/.test(trimmed) ? 'fails its EIP-55 checksum' : 'is not a 0x address of 40 hex digits';
    throw new ToolError('invalid_arguments', `${param}: "${value}" ${reason}.`, { param });
  }
  return getAddress(trimmed);
}

/** Whether a value is meant as an ENS name rather than an address (has a dot, no 0x prefix). */
export function looksLikeEnsName(value: string): boolean {
  return value.includes('.') && !/^0x/i.test(value.trim());
}

/** A 32-byte 0x hash (transaction or block). */
export function parseHash(value: string, param: string): Hash {
  const trimmed = value.trim();
  if (!isHash(trimmed)) throw new ToolError('invalid_arguments', `${param}: "${value}" is not a 0x hash of 64 hex digits.`, { param });
  return trimmed.toLowerCase() as Hash;
}
