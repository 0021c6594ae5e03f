/**
 * What the gateway charges, in credits: every price lives here. A chat costs by its tokens; a
 * direct tool run (`POST /v1/tools/execute`, an MCP `tools/call`) a flat price.
 *
 * Before each upstream call a chat's hold is topped up to the cost of what the chat has used so
 * far plus that call's worst case — not to the sum of every call's worst case, which would stop a
 * modest wallet after a few rounds although the real cost is a credit or two. At the end the exact
 * cost of the summed usage is settled (ledger/charging.ts caps it at what was held, so the
 * balance never goes below zero).
 *
 * @example
 *   await charge.cover(creditsToCover(usage, promptTokens, maxOut)) // throws 402 on the first call
 *   const credits = await charge.settle(chatCost(usage))             // { charged, remaining }
 *   await withCharge(charger, { wallet, key }, origin, TOOL_EXECUTION_CREDITS, run)
 */

interface TokenCounts {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * What the hold must reach before the next upstream call: the tokens used so far plus that call's
 * worst case, ceil((used prompt + 2 × used completion + prompt + 2 × max_out) / 1000) credits.
 */
export function creditsToCover(used: TokenCounts, promptTokens: number, maxOutputTokens: number): number {
  const tokens = used.prompt_tokens + 2 * used.completion_tokens + promptTokens + 2 * maxOutputTokens;
  return Math.max(1, Math.ceil(tokens / 1000));
}

/** Cost of a finished chat: max(1, ceil((prompt + 2 × completion) / 1000)) over every call. */
export function chatCost(usage: TokenCounts): number {
  return Math.max(1, Math.ceil((usage.prompt_tokens + 2 * usage.completion_tokens) / 1000));
}

/** A direct tool execution (REST or MCP) costs the minimum; a failed one costs nothing. */
export const TOOL_EXECUTION_CREDITS = 1;
