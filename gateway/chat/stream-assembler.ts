/**
 * Turns the upstream's SSE chunks (`chat.completion.chunk` JSON) into what the chat loop needs:
 * visible content deltas as they arrive, the round's tool calls assembled per `index` (split
 * across chunks, as vLLM sends them, or whole in one chunk, as Ollama does), usage, and the
 * finish reason. Reasoning (`reasoning_content`, `reasoning`, `<think>` blocks) never reaches
 * the content.
 *
 * @example
 *   const assembler = new StreamAssembler((text) => res.write(text))
 *   assembler.push('{"choices":[{"index":0,"delta":{"content":"Hi"}}]}')
 *   const round = assembler.finish() // { text: 'Hi', toolCalls: [], usage: undefined, ... }
 */
import { ThinkFilter } from './think-filter.js';
import type { UpstreamToolCall } from './chat-types.js';

export interface AssembledRound {
  /** Visible text of this round (reasoning removed). */
  text: string;
  toolCalls: UpstreamToolCall[];
  /** As reported by the upstream, or undefined when it sent none. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  finishReason?: string;
  /** Characters the model produced (visible, reasoning and tool-call text), for estimates. */
  producedChars: number;
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

type Json = Record<string, unknown>;

export class StreamAssembler {
  private readonly filter = new ThinkFilter();
  private readonly calls = new Map<number, PartialCall>();
  private text = '';
  private usage?: { prompt_tokens: number; completion_tokens: number };
  private finishReason?: string;
  private otherChars = 0;

  /** `onContent` receives each visible delta the moment it is known to be visible. */
  constructor(private readonly onContent: (text: string) => void) {}

  /** Feed one SSE `data` payload. Payloads that are not JSON objects are ignored. */
  push(data: string): void {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(chunk)) return;
    const usage = chunk.usage;
    if (isObject(usage) && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') {
      this.usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
    }
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return;
    for (const choice of choices) {
      if (!isObject(choice) || (choice.index !== undefined && choice.index !== 0)) continue;
      if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
      // Some servers send a final `message` instead of `delta`.
      const delta = isObject(choice.delta) ? choice.delta : isObject(choice.message) ? choice.message : undefined;
      if (delta) this.takeDelta(delta);
    }
  }

  private takeDelta(delta: Json): void {
    const { reasoning_content: reasoningContent, reasoning, content, tool_calls: toolCalls } = delta;
    if (typeof reasoningContent === 'string') this.otherChars += reasoningContent.length;
    if (typeof reasoning === 'string') this.otherChars += reasoning.length;
    if (typeof content === 'string' && content !== '') this.emit(this.filter.push(content));
    if (Array.isArray(toolCalls)) {
      for (let position = 0; position < toolCalls.length; position++) {
        const call: unknown = toolCalls[position];
        if (isObject(call)) this.takeToolCall(call, position);
      }
    }
  }

  private takeToolCall(call: Json, position: number): void {
    const index = typeof call.index === 'number' ? call.index : position;
    let partial = this.calls.get(index);
    if (!partial) {
      partial = { id: '', name: '', arguments: '' };
      this.calls.set(index, partial);
    }
    if (typeof call.id === 'string' && call.id) partial.id = call.id;
    const fn = call.function;
    if (isObject(fn)) {
      // A name arrives once (vLLM), repeated in every delta (some servers), or in pieces.
      if (typeof fn.name === 'string' && fn.name && fn.name !== partial.name) partial.name += fn.name;
      // Ollama sends arguments as an object, everyone else as (pieces of) a JSON string.
      if (typeof fn.arguments === 'string') partial.arguments += fn.arguments;
      else if (isObject(fn.arguments)) partial.arguments = JSON.stringify(fn.arguments);
    }
  }

  private emit(visible: string): void {
    if (visible === '') return;
    this.text += visible;
    this.onContent(visible);
  }

  /** The upstream stream ended (or was cut off): flush held text and hand back the round. */
  finish(): AssembledRound {
    this.emit(this.filter.end());
    const toolCalls: UpstreamToolCall[] = [];
    let callChars = 0;
    for (const index of [...this.calls.keys()].sort((a, b) => a - b)) {
      const call = this.calls.get(index)!;
      callChars += call.name.length + call.arguments.length;
      if (!call.name) continue; // a fragment without a function name cannot be run
      toolCalls.push({
        id: call.id || `call_${index}`,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      });
    }
    return {
      text: this.text,
      toolCalls,
      usage: this.usage,
      finishReason: this.finishReason,
      producedChars: this.text.length + this.filter.reasoningChars + this.otherChars + callChars,
    };
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
