/**
 * Turns the upstream's SSE chunks (`chat.completion.chunk` JSON) into what the chat loop needs:
 * visible content deltas as they arrive, the round's tool calls assembled per `index` (split
 * across chunks, as vLLM sends them, or whole in one chunk, as Ollama does), usage, and the
 * finish reason. Reasoning (`reasoning_content`, `reasoning`, `<think>` blocks) never reaches
 * the content. An error the upstream sends inside the stream (`{"error": {...}}`, as vLLM and
 * Ollama do when generation fails part-way) fails the call; so does a round whose text and tool
 * arguments outgrow `maxChars` (they are kept in memory and sent back to the model).
 *
 * @example
 *   const assembler = new StreamAssembler((text) => res.write(text), { modelId: 'svc-32b-conductor' })
 *   assembler.push('{"choices":[{"index":0,"delta":{"content":"Hi"}}]}')
 *   const round = assembler.finish() // { text: 'Hi', toolCalls: [], usage: undefined, ... }
 */
import { ThinkFilter } from './think-filter.js';
import { upstreamBadGateway, upstreamNotACompletion, upstreamStreamError } from './upstream-errors.js';
import type { UpstreamToolCall } from './chat-types.js';

export interface StreamAssemblerOptions {
  /** Named in errors. */
  modelId: string;
  /** Most characters of content and tool arguments one call may produce; default 1 MiB. */
  maxChars?: number;
  /** The model's template opens `<think>` in the prompt: hold the call's start until it is decided. */
  reasoningFirst?: boolean;
}

/** Far beyond any answer within the output-token ceiling; a bound on memory per call. */
const MAX_ASSEMBLED_CHARS = 1024 * 1024;

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
  private readonly filter: ThinkFilter;
  /** Every call in the order it began; `byIndex` points at the latest call of each `index`. */
  private readonly calls: Array<PartialCall & { index: number }> = [];
  private readonly byIndex = new Map<number, PartialCall>();
  private readonly modelId: string;
  private readonly maxChars: number;
  private text = '';
  private usage?: { prompt_tokens: number; completion_tokens: number };
  private finishReason?: string;
  private otherChars = 0;
  /** Content and tool-argument characters taken in, checked against `maxChars`. */
  private assembled = 0;

  /** `onContent` receives each visible delta the moment it is known to be visible. */
  constructor(
    private readonly onContent: (text: string) => void,
    options: StreamAssemblerOptions,
  ) {
    this.modelId = options.modelId;
    this.maxChars = options.maxChars ?? MAX_ASSEMBLED_CHARS;
    this.filter = new ThinkFilter(options.reasoningFirst);
  }

  /** The `finish_reason` the call ended with, once a chunk carried one. */
  get endedWith(): string | undefined {
    return this.finishReason;
  }

  /** A `</think>` closed a block the call never opened (see ThinkFilter). */
  get sawBareClose(): boolean {
    return this.filter.sawBareClose;
  }

  /**
   * Feed one SSE `data` payload. Payloads that are not JSON objects are ignored. Throws a 502
   * `upstream_error` for an in-stream error or a call past `maxChars`.
   */
  push(data: string): void {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (isObject(chunk)) this.take(chunk, data);
  }

  /**
   * Feed a whole JSON `chat.completion` (`choices[].message`, `usage`). Unlike a stream's odd
   * event, a body that is no completion is the answer itself gone wrong: 502 `upstream_error`,
   * which another deployment may answer instead.
   */
  pushCompletion(body: string): void {
    let completion: unknown;
    try {
      completion = JSON.parse(body);
    } catch {
      completion = undefined;
    }
    if (!isObject(completion) || (!Array.isArray(completion.choices) && (completion.error === undefined || completion.error === null))) {
      throw upstreamNotACompletion(this.modelId);
    }
    this.take(completion, body);
  }

  private take(chunk: Json, data: string): void {
    if (chunk.error !== undefined && chunk.error !== null) {
      throw upstreamStreamError(this.modelId, data);
    }
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
    if (typeof content === 'string' && content !== '') {
      this.count(content.length);
      this.emit(this.filter.push(content));
    }
    if (Array.isArray(toolCalls)) {
      for (let position = 0; position < toolCalls.length; position++) {
        const call: unknown = toolCalls[position];
        if (isObject(call)) this.takeToolCall(call, position);
      }
    }
  }

  private takeToolCall(call: Json, position: number): void {
    const index = typeof call.index === 'number' ? call.index : position;
    const fn = call.function;
    const id = typeof call.id === 'string' ? call.id : '';
    let partial = this.byIndex.get(index);
    // A new id with a name at an index already in use begins another call: SGLang and vLLM have
    // numbered every parallel call 0 (InternLM/lmdeploy#3412); a repeated id is the same call.
    const another = partial !== undefined && id !== '' && partial.id !== '' && id !== partial.id && isObject(fn) && !!fn.name;
    if (!partial || another) {
      partial = { id: '', name: '', arguments: '' };
      this.calls.push({ ...partial, index });
      partial = this.calls[this.calls.length - 1];
      this.byIndex.set(index, partial);
    }
    if (id) partial.id = id;
    if (isObject(fn)) {
      // A name arrives once (vLLM), repeated in every delta (some servers), or in pieces.
      if (typeof fn.name === 'string' && fn.name && fn.name !== partial.name) partial.name += fn.name;
      // Ollama sends arguments as an object, everyone else as (pieces of) a JSON string.
      if (typeof fn.arguments === 'string') {
        this.count(fn.arguments.length);
        partial.arguments += fn.arguments;
      } else if (isObject(fn.arguments)) {
        partial.arguments = JSON.stringify(fn.arguments);
        this.count(partial.arguments.length);
      }
    }
  }

  private count(chars: number): void {
    this.assembled += chars;
    if (this.assembled > this.maxChars) {
      throw upstreamBadGateway(this.modelId, `response too large (over ${this.maxChars} characters of content and tool arguments)`);
    }
  }

  private emit(visible: string): void {
    if (visible === '') return;
    this.text += visible;
    this.onContent(visible);
  }

  /** The upstream stream ended: flush held text and hand back the round. */
  finish(): AssembledRound {
    this.emit(this.filter.end());
    return this.round();
  }

  /**
   * What a call that failed or was cut off had produced, for billing. Held text is not flushed: a
   * failed call shows nothing more, streaming or not.
   */
  abandon(): AssembledRound {
    this.otherChars += this.filter.pendingChars;
    return this.round();
  }

  private round(): AssembledRound {
    const toolCalls: UpstreamToolCall[] = [];
    let callChars = 0;
    // By index, and in the order they began within one index (a stable sort keeps that order).
    const ordered = [...this.calls].sort((a, b) => a.index - b.index);
    for (const call of ordered) {
      callChars += call.name.length + call.arguments.length;
      if (!call.name) continue; // a fragment without a function name cannot be run
      toolCalls.push({
        id: call.id || `call_${call.index}`, // two calls share an index only when both have ids
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
