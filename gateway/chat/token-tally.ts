/**
 * A chat's token counts across its upstream calls: the upstream's own usage when a call reports
 * it, else an estimate of ceil(characters / 4) — of the prompt as it grows by messages and tools,
 * and of what the call produced (visible, reasoning and tool-call text).
 *
 * @example
 *   const tally = new TokenTally(toolsJsonLength, messages)
 *   const promptTokens = tally.promptTokens()
 *   tally.addCall(round, promptTokens) // round.usage, or the estimate when it has none
 */
import type { AssembledRound } from './stream-assembler.js';
import type { UpstreamMessage } from './chat-types.js';

/** Rough characters of JSON framing per message, for the prompt estimate. */
const MESSAGE_OVERHEAD_CHARS = 16;

export interface TokenCounts {
  prompt_tokens: number;
  completion_tokens: number;
}

export class TokenTally {
  /** Summed over the calls that finished. */
  readonly usage: TokenCounts = { prompt_tokens: 0, completion_tokens: 0 };
  /** Some call reported no usage: part of `usage` is an estimate. */
  estimated = false;
  private promptChars: number;

  constructor(toolsChars: number, messages: UpstreamMessage[]) {
    this.promptChars = toolsChars;
    for (const m of messages) this.addMessage(m);
  }

  /** A message joined the prompt of the next calls. */
  addMessage(m: UpstreamMessage): void {
    this.promptChars += messageChars(m);
  }

  /** The estimated prompt of the next call. */
  promptTokens(): number {
    return estimateTokens(this.promptChars);
  }

  /** A call finished: add its reported usage, or the estimate when it reported none. */
  addCall(round: AssembledRound, promptTokens: number): void {
    if (round.usage) {
      this.usage.prompt_tokens += round.usage.prompt_tokens;
      this.usage.completion_tokens += round.usage.completion_tokens;
    } else {
      this.estimated = true;
      this.usage.prompt_tokens += promptTokens;
      this.usage.completion_tokens += estimateTokens(round.producedChars);
    }
  }

  /**
   * What the upstream did by the time a call failed or was cut off: the finished calls plus, when
   * the cut-off call had produced something (or the client cancelled it), that call's prompt and
   * output. `partial` is that call, only if the upstream answered it (the caller knows).
   */
  consumedWith(partial: AssembledRound | undefined, promptTokens: number, cancelled: boolean): TokenCounts {
    const consumed = { ...this.usage };
    if (partial && (cancelled || partial.producedChars > 0)) {
      consumed.prompt_tokens += partial.usage?.prompt_tokens ?? promptTokens;
      consumed.completion_tokens += partial.usage?.completion_tokens ?? estimateTokens(partial.producedChars);
    }
    return consumed;
  }
}

/** Tokens from characters when the upstream reports none: ceil(chars / 4). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

function messageChars(m: UpstreamMessage): number {
  let chars = MESSAGE_OVERHEAD_CHARS + (m.content?.length ?? 0);
  if (m.role === 'assistant' && m.tool_calls) {
    for (const c of m.tool_calls) chars += MESSAGE_OVERHEAD_CHARS + c.function.name.length + c.function.arguments.length;
  }
  return chars;
}
