/**
 * The chat loop: plan with the model, run its tool calls, feed the results back, until it answers
 * without tool calls (the presence of tool calls decides, not `finish_reason`). At most
 * `chat.maxRounds` tool rounds, then one last call with `tool_choice: "none"`. The same loop serves
 * streaming and non-streaming requests: it reports visible text through `sink.content` as it
 * arrives, and the non-streaming route simply collects it.
 *
 * @example
 *   const sink = { accepted() {}, content: (t) => parts.push(t), toolsRunning() {}, drained: () => undefined }
 *   const outcome = await orchestrator.run(plan, sink, new ChatAbort())
 */
import type { Config, ModelConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ToolRunner } from '../tools/types.js';
import type { Ledger } from '../accounts/types.js';
import { NotFound } from '../errors.js';
import { ChatBilling, creditsToCover } from './chat-billing.js';
import { StreamAssembler, type AssembledRound } from './stream-assembler.js';
import { ToolOffer } from './tool-schemas.js';
import { runToolRound } from './tool-round.js';
import { ClientCancelled, chatDeadlineExceeded, upstreamUnavailable } from './upstream-errors.js';
import type { UpstreamClient, UpstreamChatParams } from './upstream-client.js';
import type { UpstreamHealth } from './upstream-health.js';
import type { ChatAbort } from './chat-abort.js';
import type { ChatCredits, FinishReason, ToolTraceEntry, UpstreamMessage, Usage } from './chat-types.js';

/** A validated chat request, ready to run. */
export interface ChatPlan {
  model: ModelConfig;
  /** The client's conversation (the preamble is added here). */
  messages: UpstreamMessage[];
  /** False when the client sent `tool_choice: "none"`. */
  toolsEnabled: boolean;
  /** Client `max_completion_tokens` or `max_tokens`. */
  maxTokens?: number;
  sampling: Pick<UpstreamChatParams, 'temperature' | 'top_p' | 'stop' | 'seed' | 'user'>;
  wallet: string;
}

/** Where the loop reports progress; the streaming route turns these into SSE. */
export interface ChatSink {
  /**
   * The request passed every check that is answered with a plain HTTP error (model up, first
   * credits held, the first upstream call answered 2xx); from here on failures belong in the
   * answer itself. Called once, before any content.
   */
  accepted(): void;
  /** Visible answer text, in order; the concatenation of all calls is the final `content`. */
  content(text: string): void;
  /** A tool round is starting with these tools. */
  toolsRunning(tools: string[]): void;
  /** A tool round finished: its calls, as `tool_trace` will list them (so a stream can show them live). */
  toolsDone?(entries: ToolTraceEntry[]): void;
  /** Backpressure: a promise while the client cannot take more, else undefined (see StreamChatOptions). */
  drained(): Promise<void> | undefined;
}

export interface ChatOutcome {
  content: string;
  finishReason: FinishReason;
  usage: Usage;
  toolTrace: ToolTraceEntry[];
  /** Present when credits are on. */
  credits?: ChatCredits;
  toolRounds: number;
}

export interface OrchestratorDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  upstreams: Map<string, UpstreamClient>;
  health: UpstreamHealth;
  tools: ToolRunner;
  /** Undefined in free mode. */
  ledger?: Ledger;
}

interface ModelSeries {
  rounds: { observe(value: number): void };
  promptTokens: { inc(value: number): void };
  completionTokens: { inc(value: number): void };
  credits: { inc(value: number): void };
}

/** The most a single upstream call may write, whatever the client or model allow. */
const OUTPUT_TOKEN_CEILING = 2048;
/** Rough characters of JSON framing per message, for the prompt estimate. */
const MESSAGE_OVERHEAD_CHARS = 16;

export class ChatOrchestrator {
  private readonly offer = new ToolOffer();
  private readonly modelsByName = new Map<string, ModelConfig>();
  private readonly seriesByModel = new Map<string, ModelSeries>();
  /**
   * Models seen to write a `</think>` they never opened (their template opens it in the prompt):
   * their calls hold text back until the reasoning ends, so none of it is shown (see ThinkFilter).
   */
  private readonly reasoningInPrompt = new Set<string>();
  private preambleDay = -1;
  private preambleText = '';

  constructor(private readonly deps: OrchestratorDeps) {
    for (const model of deps.config.models) {
      this.modelsByName.set(model.id, model);
      this.modelsByName.set(model.alias, model);
    }
  }

  /** How long a streamed answer may stay silent before it sends a keep-alive comment (`chat.keepAliveMs`). */
  get keepAliveMs(): number {
    return this.deps.config.chat.keepAliveMs;
  }

  /** Alias or canonical id → model; default `conductor` (the first model); unknown → 404. */
  resolveModel(name: string | undefined): ModelConfig {
    const model = name === undefined ? this.deps.config.models[0] : this.modelsByName.get(name);
    if (!model) throw new NotFound(`The model "${name}" does not exist.`, 'model_not_found', 'model');
    return model;
  }

  /**
   * Run the chat. `abort` is the request's: the route aborts it with ClientCancelled when the
   * client leaves; the loop aborts it at the deadline (and an upstream call at its timeout). Every
   * upstream and tool call listens to it; whatever aborted it is what `run` throws.
   */
  async run(plan: ChatPlan, sink: ChatSink, abort: ChatAbort): Promise<ChatOutcome> {
    const { config, logger } = this.deps;
    const model = plan.model;
    // Fail fast, before any work: the model's upstream is known to be down.
    if (this.deps.health.isDown(model.id)) throw upstreamUnavailable(model.id, 'its health probe failed');
    const client = this.deps.upstreams.get(model.id)!;

    const deadline = setTimeout(() => abort.abort(chatDeadlineExceeded(config.chat.deadlineMs)), config.chat.deadlineMs);

    const billing = new ChatBilling(this.deps.ledger, plan.wallet);
    const tools = plan.toolsEnabled ? this.offer.functionsFor(this.deps.tools.listTools()) : [];
    const toolsChars = tools.length ? this.offer.jsonLength : 0;
    const maxOut = Math.min(plan.maxTokens ?? Infinity, model.upstream.maxOutputTokens, OUTPUT_TOKEN_CEILING);
    const messages: UpstreamMessage[] = [
      { role: 'system', content: this.preamble() },
      ...plan.messages,
    ];
    let promptChars = toolsChars;
    for (const m of messages) promptChars += messageChars(m);

    const usage = { prompt_tokens: 0, completion_tokens: 0 };
    const trace: ToolTraceEntry[] = [];
    let content = '';
    let toolRounds = 0;
    let finishReason: FinishReason = 'stop';
    let estimated = false;
    let accepted = false;
    let inFlight: { assembler: StreamAssembler; promptTokens: number } | undefined;

    const onVisible = (() => {
      let roundHasText = false;
      return {
        newRound: () => (roundHasText = false),
        push: (text: string) => {
          // A round's leading whitespace (often left behind by a </think>) is not part of the answer;
          // rounds are joined by a blank line.
          if (!roundHasText) {
            text = text.trimStart();
            if (text === '') return;
            roundHasText = true;
            if (content !== '') text = `\n\n${text}`;
          }
          content += text;
          sink.content(text);
        },
      };
    })();

    try {
      for (;;) {
        const forceFinal = tools.length > 0 && toolRounds >= config.chat.maxRounds;
        const promptTokens = estimateTokens(promptChars);
        const covered = await billing.cover(creditsToCover(usage, promptTokens, maxOut));
        if (!covered) {
          finishReason = 'length'; // out of credits (or the hold expired): answer with what exists
          break;
        }
        if (abort.aborted) throw abort.reason;

        onVisible.newRound();
        const assembler = new StreamAssembler(onVisible.push, {
          modelId: model.id,
          reasoningFirst: this.reasoningInPrompt.has(model.id),
        });
        inFlight = { assembler, promptTokens };
        await client.streamChat(
          {
            messages,
            max_tokens: maxOut,
            ...plan.sampling,
            ...(tools.length ? { tools, tool_choice: forceFinal ? 'none' : 'auto' } : {}),
          },
          {
            abort,
            onData: (data) => assembler.push(data),
            drained: sink.drained,
            // Accepted once the first upstream call answered 2xx: until then every refusal (402,
            // 503, the upstream's own 4xx) is still a plain HTTP error, and after it the stream's
            // keep-alives cover however long the model thinks or the tools run.
            onResponse: accepted
              ? undefined
              : () => {
                  accepted = true;
                  sink.accepted();
                },
          },
        );
        const round: AssembledRound = assembler.finish();
        inFlight = undefined;
        if (assembler.sawBareClose) this.reasoningInPrompt.add(model.id);
        if (round.usage) {
          usage.prompt_tokens += round.usage.prompt_tokens;
          usage.completion_tokens += round.usage.completion_tokens;
        } else {
          estimated = true;
          usage.prompt_tokens += promptTokens;
          usage.completion_tokens += estimateTokens(round.producedChars);
        }

        if (round.toolCalls.length === 0 || forceFinal || tools.length === 0) {
          finishReason = round.finishReason === 'length' ? 'length' : 'stop';
          break;
        }

        toolRounds++;
        const assistant: UpstreamMessage = { role: 'assistant', content: round.text || null, tool_calls: round.toolCalls };
        messages.push(assistant);
        promptChars += messageChars(assistant);
        sink.toolsRunning(round.toolCalls.map((c) => c.function.name));
        const results = await runToolRound(round.toolCalls, {
          round: toolRounds,
          runner: this.deps.tools,
          concurrency: config.chat.toolConcurrency,
          maxChars: config.chat.toolResultMaxChars,
          signal: abort.signal,
        });
        for (const m of results.messages) {
          messages.push(m);
          promptChars += messageChars(m);
        }
        trace.push(...results.trace);
        sink.toolsDone?.(results.trace);
      }

      if (estimated) {
        logger.info({ model: model.id, usage }, 'upstream reported no usage: tokens estimated as ceil(characters / 4)');
      }
      const credits = await billing.settle(usage);
      const series = this.seriesOf(model.id);
      series.rounds.observe(toolRounds);
      series.promptTokens.inc(usage.prompt_tokens);
      series.completionTokens.inc(usage.completion_tokens);
      if (credits) series.credits.inc(credits.charged);
      return {
        content,
        finishReason,
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        toolTrace: trace,
        credits,
        toolRounds,
      };
    } catch (err) {
      await this.settleAfterFailure(billing, usage, inFlight, abort.reason instanceof ClientCancelled, model.id);
      throw abort.aborted ? abort.reason : err;
    } finally {
      clearTimeout(deadline);
    }
  }

  /** A model's chat metrics as child handles, made once per model rather than per request. */
  private seriesOf(modelId: string): ModelSeries {
    let series = this.seriesByModel.get(modelId);
    if (!series) {
      const { metrics } = this.deps;
      series = {
        rounds: metrics.chatRounds.labels({ model: modelId }),
        promptTokens: metrics.chatTokens.labels({ model: modelId, kind: 'prompt' }),
        completionTokens: metrics.chatTokens.labels({ model: modelId, kind: 'completion' }),
        credits: metrics.chatCredits.labels({ model: modelId }),
      };
      this.seriesByModel.set(modelId, series);
    }
    return series;
  }

  /** The system preamble with today's date (UTC), rebuilt only when the day changes. */
  private preamble(): string {
    const day = Math.floor(Date.now() / 86_400_000);
    if (day !== this.preambleDay) {
      this.preambleDay = day;
      this.preambleText = this.deps.config.chat.preamble.replaceAll('{date}', new Date(day * 86_400_000).toISOString().slice(0, 10));
    }
    return this.preambleText;
  }

  /**
   * A chat that failed or was cancelled pays for what the upstream already did: finished calls
   * plus, when it was cut off mid-call, that call's prompt and what it had written. Nothing done
   * → everything held is released. Text the cut-off call still held back is not shown: after a
   * failure the streamed answer ends with what it had (the error chunk follows at once), just as
   * the non-streaming one carries no content.
   */
  private async settleAfterFailure(
    billing: ChatBilling,
    usage: { prompt_tokens: number; completion_tokens: number },
    inFlight: { assembler: StreamAssembler; promptTokens: number } | undefined,
    cancelled: boolean,
    modelId: string,
  ): Promise<void> {
    const consumed = { ...usage };
    if (inFlight) {
      const partial = inFlight.assembler.abandon();
      if (cancelled || partial.producedChars > 0) {
        consumed.prompt_tokens += partial.usage?.prompt_tokens ?? inFlight.promptTokens;
        consumed.completion_tokens += partial.usage?.completion_tokens ?? estimateTokens(partial.producedChars);
      }
    }
    try {
      if (consumed.prompt_tokens + consumed.completion_tokens === 0) await billing.release();
      else {
        const credits = await billing.settle(consumed);
        if (credits) this.seriesOf(modelId).credits.inc(credits.charged);
      }
    } catch (err) {
      // The reservation's TTL returns the credits if this fails; the chat's own error matters more.
      this.deps.logger.error({ err, model: modelId }, 'settling a failed chat failed');
    }
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
