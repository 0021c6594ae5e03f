/**
 * The chat loop: plan with the model, run its tool calls, feed the results back, until it answers
 * without tool calls (the presence of tool calls decides, not `finish_reason`). At most
 * `chat.maxRounds` tool rounds, then one last call with `tool_choice: "none"`. Functions the client
 * brought are offered next to the gateway's tools: a round that calls any of them runs its gateway
 * calls, keeps the gateway's rounds for the continuation (kept-rounds.ts) and ends the chat with
 * `finish_reason: "tool_calls"`, handing the client its calls. The same loop serves
 * streaming and non-streaming requests: it reports visible text through `sink.content` as it
 * arrives, and the non-streaming route simply collects it. Under a JSON answer format
 * (answer-format.ts) the answer is the final call's text alone, held until it validates
 * (structured-answer.ts): rounds that offer tools go up without the format, the call that answers
 * is checked, one corrective call (`tool_choice: "none"` and the format) follows an invalid answer,
 * and only then does the answer reach `sink.content`.
 *
 * @example
 *   const sink = { accepted() {}, content: (t) => parts.push(t), toolsRunning() {}, drained: () => undefined }
 *   const outcome = await orchestrator.run(plan, sink, new ChatAbort())
 */
import type { Config, ModelConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ToolInfo, ToolRunner } from '../tools/types.js';
import type { ToolScope } from '../tools/tool-scope.js';
import type { Charge, ChargeOrigin, Charger, UsageDetail } from '../ledger/charging.js';
import { echoed, InsufficientCredits, NotFound } from '../errors.js';
import { chatCost, creditsToCover } from '../pricing.js';
import { AnswerText } from './answer-text.js';
import { StreamAssembler, type AssembledRound } from './stream-assembler.js';
import { TokenTally } from './token-tally.js';
import { ToolOffer } from './tool-schemas.js';
import { runToolRound } from './tool-round.js';
import { assertNoNameConflict, toolsEnabled, upstreamToolChoice, type ClientTools } from './client-tools.js';
import { callIdsIn, splitToolCalls, withUsableCallIds } from './hybrid-round.js';
import type { KeptRounds } from './kept-rounds.js';
import { AnswerFormats, upstreamResponseFormat, type AnswerFormat, type FormatRequest } from './answer-format.js';
import { answerStep, correctionPrompt } from './structured-answer.js';
import {
  ClientCancelled,
  UpstreamFailure,
  chatDeadlineExceeded,
  upstreamAborted,
  upstreamInvalidOutput,
  upstreamStreamCutOff,
  upstreamSettingsOf,
  upstreamUnavailable,
} from './upstream-errors.js';
import type { UpstreamChatParams } from './upstream-client.js';
import type { Deployment, Fleet } from './fleet.js';
import { conversationKey } from './conversation-key.js';
import { nextAttempt, retryDelayMs } from './retry-policy.js';
import type { ChatAbort } from './chat-abort.js';
import type { ChatCredits, FinishReason, FunctionTool, ToolTraceEntry, UpstreamMessage, UpstreamToolCall, Usage } from './chat-types.js';
import { NO_SPAN, type TraceSpan } from '../tracing/trace-span.js';
import { errorTypeOf } from '../tracing/error-type.js';
import {
  GEN_AI_AGENT_NAME,
  GEN_AI_INPUT_MESSAGES,
  GEN_AI_OPERATION_NAME,
  GEN_AI_OUTPUT_MESSAGES,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MAX_TOKENS,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_RESPONSE_FINISH_REASONS,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  SERVER_ADDRESS,
  SERVER_PORT,
  SWITCHYARD_CHAT_ROUNDS,
  SWITCHYARD_CREDITS_CHARGED,
  SWITCHYARD_DEPLOYMENT,
} from '../../telemetry/semconv.js';

/** Attempts per upstream call, and the backoff between two on a model's only deployment: 100 ms doubling, at most 2 s. */
const RETRY = { maxAttempts: 3, baseMs: 100, capMs: 2_000 };

/** A validated chat request, ready to run. */
export interface ChatPlan {
  model: ModelConfig;
  /** The client's conversation (the preamble is added here). */
  messages: UpstreamMessage[];
  /**
   * A conversation the gateway itself kept whole (a stored response's, with every gateway round),
   * sent before `messages` as it is: no kept rounds are spliced into it.
   */
  history?: UpstreamMessage[];
  /**
   * System messages the caller puts before the conversation (Responses `instructions`): sent
   * first, and part of `ChatOutcome.conversation`, but not of the conversation's key, so a later
   * turn with other instructions stays on the same deployment.
   */
  instructions?: UpstreamMessage[];
  /** The client's own functions and its tool_choice (`none` turns every tool off). */
  clientTools: ClientTools;
  /** Client `max_completion_tokens` or `max_tokens`. */
  maxTokens?: number;
  sampling: Pick<UpstreamChatParams, 'temperature' | 'top_p' | 'stop' | 'seed' | 'user'>;
  wallet: string;
  /** The API key the request came with: its budgets are charged with the wallet, and it is the usage record's key id. */
  key?: string;
  /** The gateway tools the key may use (offered to the model, and run); absent: every tool. Client functions are never scoped. */
  toolScope?: ToolScope;
  /** The answer format (`answerFormat` compiles it); plain text when absent. */
  format?: AnswerFormat;
  /** The request's span: the chat's `invoke_agent` span goes under it (none: not traced). */
  trace?: TraceSpan;
  /** The request this chat bills, for its usage record (the model is added here). */
  origin: Omit<ChargeOrigin, 'model'>;
}

/** Where the loop reports progress; the streaming route turns these into SSE. */
export interface ChatSink {
  /**
   * The request passed every check that is answered with a plain HTTP error (model up, first
   * credits held, the first upstream call answered 2xx); from here on failures belong in the
   * answer itself. Called once, before any content, with the estimated prompt of that first call
   * (ceil(characters / 4), the same estimate count_tokens gives), for a format that reports
   * provisional usage as it starts (the Messages API's `message_start`).
   */
  accepted(first: { promptTokens: number }): void;
  /** Visible answer text, in order; the concatenation of all calls is the final `content`. */
  content(text: string): void;
  /** A tool round is starting with these calls (the model's text of the round came before, through `content`). */
  toolsRunning(calls: UpstreamToolCall[]): void;
  /**
   * A tool round finished: its calls as `tool_trace` will list them (so a stream can show them
   * live), and each call's result as the model reads it, in the same order.
   */
  toolsDone?(entries: ToolTraceEntry[], results: string[]): void;
  /** Backpressure: a promise while the client cannot take more, else undefined (see StreamChatOptions). */
  drained(): Promise<void> | undefined;
  /**
   * False when nothing reaches the client before the chat ends (a JSON answer): each call's text
   * then waits until its reasoning is decided, so a bare `</think>` drops all of it even the first
   * time a model writes one. Default true.
   */
  live?: boolean;
}

export interface ChatOutcome {
  content: string;
  finishReason: FinishReason;
  /** With finish reason `length`: what cut the answer short, the token cap or the wallet's credits. */
  cutShort?: 'max_tokens' | 'credits';
  usage: Usage;
  toolTrace: ToolTraceEntry[];
  /** Present when credits are on. */
  credits?: ChatCredits;
  toolRounds: number;
  /** With finish reason `tool_calls`: the calls of the client's functions it is to run. */
  clientToolCalls?: UpstreamToolCall[];
  /**
   * The conversation as the model saw it, without the preamble: the history, the messages (kept
   * rounds spliced in) and each tool round of this request with its results. The final answer's
   * text is `content`, not in here.
   */
  conversation: UpstreamMessage[];
  /** A model with several deployments: the ones whose answers the chat used, in order (for the request's log line, never the body). */
  deployments?: string[];
}

export interface OrchestratorDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  /** Each model's deployments, by canonical id. */
  fleets: Map<string, Fleet>;
  tools: ToolRunner;
  /** The app's one charging switch (NO_CHARGE in free mode). */
  charger: Charger;
  /** The gateway's rounds of chats that handed the client its calls, for their continuation. */
  keptRounds: KeptRounds;
}

interface ModelSeries {
  rounds: { observe(value: number): void };
  promptTokens: { inc(value: number): void };
  completionTokens: { inc(value: number): void };
  credits: { inc(value: number): void };
}

/** One chat's state while it runs. */
interface ChatRun {
  plan: ChatPlan;
  /** Its `invoke_agent switchyard` span (NO_SPAN untraced): each upstream and tool call's span goes under it. */
  span: TraceSpan;
  fleet: Fleet;
  /** The conversation's key (conversation-key.ts), computed once; undefined for a model with one deployment, or no user message. */
  key?: number;
  /** Names of the deployments that answered, in order (a model with several). */
  answeredBy: string[];
  billing: Charge;
  /** Offered to the model; empty when the client turned tools off. */
  tools: FunctionTool[];
  /** What each call's hold covers: the client's max_tokens or the largest of the deployments' maxOutputTokens. */
  maxOut: number;
  /** The conversation sent upstream: preamble, the client's messages, then each tool round. */
  messages: UpstreamMessage[];
  /** Where this request's own rounds begin in `messages`. */
  ownFrom: number;
  /** Every tool-call id of the conversation, so a new call never reuses one. */
  callIds: Set<string>;
  tally: TokenTally;
  answer: AnswerText;
  trace: ToolTraceEntry[];
  toolRounds: number;
  /** The first upstream call answered 2xx (see ChatSink.accepted). */
  accepted: boolean;
  /** A JSON answer format: each call's text is held, and only the answer is given (see decideAnswer). */
  json?: Exclude<AnswerFormat, { type: 'text' }>;
  /** The answer held back under a JSON format, given once the chat ends. */
  held?: string;
  /** The corrective call is next (or under way): its exchange starts at `from` in `messages`. */
  correction?: { from: number };
  /**
   * The upstream call under way, billed from what it produced if the chat fails during it;
   * `answered` once its status line came back (the prompt was taken).
   */
  inFlight?: { assembler: StreamAssembler; promptTokens: number; answered: boolean };
}

export class ChatOrchestrator {
  private readonly offer = new ToolOffer();
  /** One offer per key scope, so a scoped key's chats reuse one built and measured offer. */
  private readonly scopedOffers = new WeakMap<ToolScope, ToolOffer>();
  private readonly formats = new AnswerFormats();
  private readonly modelsByName = new Map<string, ModelConfig>();
  private readonly seriesByModel = new Map<string, ModelSeries>();
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

  /**
   * The answer format a request asked for, checked and compiled (`param`: the field it came in,
   * named by a 400); do this before anything else of the request runs.
   */
  answerFormat(request: FormatRequest, param: string): AnswerFormat {
    return this.formats.compile(request, param);
  }

  /** Alias or canonical id → model; default `conductor` (the first model); unknown → 404. */
  resolveModel(name: string | undefined): ModelConfig {
    const model = name === undefined ? this.deps.config.models[0] : this.modelsByName.get(name);
    if (!model) throw new NotFound(`The model "${echoed(String(name))}" does not exist.`, 'model_not_found', 'model');
    return model;
  }

  /**
   * Run the chat. `abort` is the request's: the route aborts it with ClientCancelled when the
   * client leaves; the loop aborts it at the deadline (and an upstream call at its timeout). Every
   * upstream and tool call listens to it; whatever aborted it is what `run` throws.
   */
  async run(plan: ChatPlan, sink: ChatSink, abort: ChatAbort): Promise<ChatOutcome> {
    const fleet = this.deps.fleets.get(plan.model.id)!;
    // Fail fast, before any work: no deployment of the model can take a call.
    if (fleet.isDown()) {
      const reason = fleet.several ? 'every deployment is down or cooling down' : 'its health probe failed';
      throw upstreamUnavailable(plan.model.id, reason, fleet.retryAfterSeconds(), upstreamSettingsOf(plan.model));
    }
    const { deadlineMs, maxRounds } = this.deps.config.chat;
    assertNoNameConflict(plan.clientTools, this.offerFor(plan.toolScope).functionsFor(this.toolsFor(plan.toolScope)));
    const restored = await this.deps.keptRounds.restore(plan.wallet, plan.messages);
    const span = (plan.trace ?? NO_SPAN).child('invoke_agent switchyard', 'internal', {
      [GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [GEN_AI_AGENT_NAME]: 'switchyard',
      [GEN_AI_REQUEST_MODEL]: plan.model.id,
      [GEN_AI_REQUEST_MAX_TOKENS]: plan.maxTokens,
    });
    span.content(GEN_AI_INPUT_MESSAGES, () => plan.messages);
    const chat = this.startChat(plan, fleet, conversationOf(plan, restored), sink, span);
    const deadline = setTimeout(() => abort.abort(chatDeadlineExceeded(deadlineMs)), deadlineMs);
    try {
      let finishReason: FinishReason;
      let cutShort: ChatOutcome['cutShort'];
      let clientCalls: UpstreamToolCall[] = [];
      for (;;) {
        // After the round cap, and for the corrective call, the model must answer: tool_choice none.
        const final = (chat.tools.length > 0 && chat.toolRounds >= maxRounds) || chat.correction !== undefined;
        const promptTokens = chat.tally.promptTokens();
        const need = creditsToCover(chat.tally.usage, promptTokens, chat.maxOut);
        let round: AssembledRound;
        if (sink.live === false && chat.billing.claimChargeAtEnd(need)) {
          // Nothing reaches the client before the chat settles: no hold while the model answers.
          round = await this.callUpstream(chat, { promptTokens, final }, sink, abort);
        } else if (chat.billing.claimRunAhead(need)) {
          round = await this.callUpstreamWhileHolding(chat, need, { promptTokens, final }, sink, abort);
        } else {
          if (!(await this.reserve(chat, need))) {
            finishReason = 'length'; // out of credits (or the hold expired): answer with what exists
            cutShort = 'credits';
            break;
          }
          if (abort.aborted) throw abort.reason;
          round = await this.callUpstream(chat, { promptTokens, final }, sink, abort);
        }
        if (round.toolCalls.length === 0 || final || chat.tools.length === 0) {
          finishReason = round.finishReason === 'length' ? 'length' : 'stop';
          if (finishReason === 'length') cutShort = 'max_tokens';
          // A JSON answer is checked (one cut off by the token cap goes back as it is, as OpenAI's does).
          if (chat.json && !this.decideAnswer(chat, round.text, finishReason)) continue;
          break;
        }
        const { names, parallel } = plan.clientTools;
        const split = splitToolCalls(withUsableCallIds(round.toolCalls, chat.callIds, names), names, { parallel });
        await this.runTools(chat, { text: round.text, calls: split.calls, run: split.gateway }, sink, abort);
        if (split.client.length) {
          // The client's turn: keep what it will not send back (this request's rounds), then hand it its calls.
          clientCalls = split.client;
          finishReason = 'tool_calls';
          const ids = clientCalls.map((c) => c.id);
          await this.deps.keptRounds.keep(plan.wallet, ids, chat.messages.slice(chat.ownFrom));
          break;
        }
      }
      // A held answer is given now, whole: nothing of a JSON answer went out before it was decided.
      if (chat.held) chat.answer.push(chat.held);
      return await this.finishChat(chat, finishReason, clientCalls, cutShort);
    } catch (err) {
      await this.settleAfterFailure(chat, abort.reason instanceof ClientCancelled);
      const thrown = abort.aborted ? abort.reason : err;
      span.fail(errorTypeOf(thrown));
      throw thrown;
    } finally {
      clearTimeout(deadline);
      span.end();
    }
  }

  /** A hold for the next call (`Charge.cover`), as a ledger event on the chat's span. */
  private async reserve(chat: ChatRun, need: number): Promise<boolean> {
    const started = performance.now();
    const granted = await chat.billing.cover(need);
    if (chat.span.recording) chat.span.event('switchyard.ledger.reserve', { credits: need, granted, ms: msSince(started) });
    return granted;
  }

  /** The gateway's tools a chat of this scope offers (the same array until the tools change). */
  private toolsFor(scope: ToolScope | undefined): ToolInfo[] {
    const all = this.deps.tools.listTools();
    return scope ? scope.filter(all) : all;
  }

  /** One offer per key scope: a scoped key's chats reuse one built and measured offer. */
  private offerFor(scope: ToolScope | undefined): ToolOffer {
    if (!scope) return this.offer;
    let offer = this.scopedOffers.get(scope);
    if (!offer) {
      offer = new ToolOffer();
      this.scopedOffers.set(scope, offer);
    }
    return offer;
  }

  /**
   * The prompt tokens the first upstream call of `plan` would carry, estimated as the loop
   * estimates before each call (ceil(characters / 4)): the preamble, instructions, history, the
   * messages with their kept rounds restored, and the schemas of every tool the model is offered.
   * Checks the client's tools as `run` does; nothing is spent and no upstream is called.
   */
  async estimatePromptTokens(plan: ChatPlan): Promise<number> {
    assertNoNameConflict(plan.clientTools, this.offerFor(plan.toolScope).functionsFor(this.toolsFor(plan.toolScope)));
    const restored = await this.deps.keptRounds.restore(plan.wallet, plan.messages);
    const messages: UpstreamMessage[] = [{ role: 'system', content: this.preamble() }, ...conversationOf(plan, restored)];
    return new TokenTally(this.toolsOffered(plan).toolsChars, messages).promptTokens();
  }

  /** The tools a chat offers (none when the client turned them off; the gateway's only those its key may use) and the length of their JSON. */
  private toolsOffered(plan: ChatPlan): { tools: FunctionTool[]; toolsChars: number } {
    if (!toolsEnabled(plan.clientTools)) return { tools: [], toolsChars: 0 };
    const offer = this.offerFor(plan.toolScope);
    const gatewayTools = offer.functionsFor(this.toolsFor(plan.toolScope));
    const clientFunctions = plan.clientTools.functions;
    const tools = clientFunctions.length ? [...gatewayTools, ...clientFunctions] : gatewayTools;
    const toolsChars = tools.length ? offer.jsonLength + (clientFunctions.length ? JSON.stringify(clientFunctions).length : 0) : 0;
    return { tools, toolsChars };
  }

  /** The chat's state before its first call: the preamble added, the gateway's tools and the client's functions offered, nothing spent. */
  private startChat(plan: ChatPlan, fleet: Fleet, conversation: UpstreamMessage[], sink: ChatSink, span: TraceSpan): ChatRun {
    const { tools, toolsChars } = this.toolsOffered(plan);
    const messages: UpstreamMessage[] = [{ role: 'system', content: this.preamble() }, ...conversation];
    return {
      plan,
      span,
      fleet,
      // The client's messages alone (not the preamble, instructions or kept rounds), and only when there is a choice to make.
      key: fleet.several ? conversationKey(plan.wallet, plan.history, plan.messages) : undefined,
      answeredBy: [],
      billing: this.deps.charger.begin(plan.key === undefined ? { wallet: plan.wallet } : { wallet: plan.wallet, key: plan.key }, {
        ...plan.origin,
        model: plan.model.id,
      }),
      tools,
      // The config holds maxOutputTokens to OUTPUT_TOKEN_CEILING; the client can only lower it.
      maxOut: Math.min(plan.maxTokens ?? Infinity, fleet.maxOutputTokens),
      messages,
      ownFrom: messages.length,
      callIds: callIdsIn(conversation),
      tally: new TokenTally(toolsChars, messages),
      answer: new AnswerText((text) => sink.content(text)),
      trace: [],
      toolRounds: 0,
      accepted: false,
      ...(plan.format && plan.format.type !== 'text' ? { json: plan.format } : {}),
    };
  }

  /**
   * Under a JSON format, the call that answered: true when the chat ends with its answer held,
   * false when the corrective call is to follow (the answer and what was wrong with it go up as an
   * assistant and a user turn, left out of the outcome's conversation). A strict
   * schema's answer still invalid after the correction fails the chat (502, both calls charged).
   */
  private decideAnswer(chat: ChatRun, text: string, finishReason: FinishReason): boolean {
    const json = chat.json!;
    if (finishReason === 'length') {
      chat.held = text;
      return true;
    }
    const step = answerStep(json, text, { corrected: chat.correction !== undefined });
    switch (step.step) {
      case 'answer':
        chat.held = step.text;
        return true;
      case 'correct':
        // Should the credits run out before the corrective call, the answer so far is all there is.
        chat.held = json.type === 'json_schema' && json.strict ? undefined : text;
        chat.correction = { from: chat.messages.length };
        this.addMessage(chat, { role: 'assistant', content: text });
        this.addMessage(chat, { role: 'user', content: correctionPrompt(json, step.problem) });
        return false;
      case 'as_is':
        this.deps.logger.warn(
          { model: chat.plan.model.id, problem: step.problem },
          'the answer does not match the requested format after a corrective call: it goes back as it is',
        );
        chat.held = text;
        return true;
      case 'fail':
        throw upstreamInvalidOutput(chat.plan.model.id, step.problem);
    }
  }

  /**
   * The first upstream call, sent while its hold is being taken (the wallet's last seen balance
   * covers the hold twice over), so the ledger's round trip overlaps the upstream's instead of
   * preceding it. Nothing of the answer is read before the hold is granted; a refused hold aborts
   * the call with its 402. The call never ends before the hold does, so a failed chat finds the
   * hold it must release.
   */
  private async callUpstreamWhileHolding(
    chat: ChatRun,
    need: number,
    call: { promptTokens: number; final: boolean },
    sink: ChatSink,
    abort: ChatAbort,
  ): Promise<AssembledRound> {
    // A first cover resolves true or throws (Charge.claimRunAhead).
    const held = this.reserve(chat, need).then(() => undefined);
    held.catch((err: unknown) => void abort.abort(err));
    try {
      return await this.callUpstream(chat, call, sink, abort, held);
    } finally {
      await held.catch(() => {});
    }
  }

  /**
   * One upstream call: sent where the fleet says, and tried again when it failed before any of
   * its output reached the client (retry-policy.ts says whether, and where). An abandoned attempt
   * is not charged: the chat pays for what the attempt that answered produced.
   */
  private async callUpstream(
    chat: ChatRun,
    call: { promptTokens: number; final: boolean },
    sink: ChatSink,
    abort: ChatAbort,
    admitted?: Promise<void>,
  ): Promise<AssembledRound> {
    const { fleet } = chat;
    const { maxAttempts, baseMs, capMs } = RETRY;
    let deployment = fleet.choose(chat.key);
    // One `chat {model}` span per call, whatever its attempts: retries and failovers are its events.
    const span = chat.span.child(`chat ${deployment?.upstreamModel ?? chat.plan.model.id}`, 'client', {
      [GEN_AI_OPERATION_NAME]: 'chat',
      [GEN_AI_PROVIDER_NAME]: 'openai',
      [GEN_AI_REQUEST_MODEL]: deployment?.upstreamModel,
    });
    try {
      for (let attempt = 1; ; attempt++) {
        // Every deployment went unhealthy since the chat began (a cooldown, a probe).
        if (!deployment) {
          const reason = 'every deployment is down or cooling down';
          throw upstreamUnavailable(chat.plan.model.id, reason, fleet.retryAfterSeconds(), upstreamSettingsOf(chat.plan.model));
        }
        const shown = chat.answer.text.length;
        if (span.recording) span.set(deploymentAttributes(deployment));
        try {
          const canFailOver = attempt < maxAttempts && fleet.hasAlternative(deployment);
          const round = await this.attempt(chat, deployment, { ...call, canFailOver }, sink, abort, admitted, span);
          if (span.recording) span.set(roundAttributes(round));
          return round;
        } catch (err) {
          if (!(err instanceof UpstreamFailure) || abort.aborted) throw err;
          const failure = { kind: err.kind, status: err.upstreamStatus, errorCode: err.errorCode };
          const wrote = chat.answer.text.length > shown;
          const next = nextAttempt({ attempt, maxAttempts, failure, wrote, fleet: fleet.several });
          fleet.failed(deployment, err, next);
          if (next === 'give-up') throw err;
          chat.inFlight = undefined;
          const from = deployment.name;
          if (next === 'retry') await abort.wait(retryDelayMs(attempt, { baseMs, capMs, retryAfter: err.retryAfter }));
          else {
            deployment = fleet.choose(chat.key, deployment);
            if (!deployment) throw err;
          }
          span.event(`switchyard.upstream.${next}`, { attempt, 'error.type': err.code, [SWITCHYARD_DEPLOYMENT]: from });
        }
      }
    } catch (err) {
      span.fail(errorTypeOf(abort.aborted ? abort.reason : err));
      throw err;
    } finally {
      span.end();
    }
  }

  /**
   * One attempt on `deployment` (streamed, or one JSON answer when nothing reaches a client before the chat ends), on its own branch of the chat's abort (its timeouts end
   * the attempt, not the chat). A live answer gets its visible text as it arrives (once `admitted`,
   * when given, resolved); one that reaches nobody before the chat ends gets it once the call
   * succeeded, so an abandoned attempt leaves nothing behind; under a JSON format nothing is given
   * here (the round's text is the candidate answer, see decideAnswer). `final`: the model must
   * answer now (`tool_choice: "none"`); a JSON format goes up with the calls that offer no tools.
   */
  private async attempt(
    chat: ChatRun,
    deployment: Deployment,
    call: { promptTokens: number; final: boolean; canFailOver: boolean },
    sink: ChatSink,
    abort: ChatAbort,
    admitted: Promise<void> | undefined,
    span: TraceSpan,
  ): Promise<AssembledRound> {
    const modelId = chat.plan.model.id;
    const { tools, fleet } = chat;
    const live = sink.live !== false;
    chat.answer.newCall();
    let heldBack = '';
    const onText = chat.json ? holdText : live ? chat.answer.push : (text: string) => void (heldBack += text);
    const assembler = new StreamAssembler(onText, { modelId, reasoningFirst: !live || deployment.reasoningInPrompt });
    const inFlight = { assembler, promptTokens: call.promptTokens, answered: false };
    chat.inFlight = inFlight;
    const format = chat.json && (tools.length === 0 || call.final) ? upstreamResponseFormat(chat.json) : undefined;
    let sawDone = false;
    const branch = abort.branch();
    fleet.begin(deployment);
    try {
      await deployment.client.streamChat(
        {
          messages: chat.messages,
          max_tokens: Math.min(chat.plan.maxTokens ?? Infinity, deployment.maxOutputTokens),
          ...chat.plan.sampling,
          ...(tools.length ? { tools, tool_choice: upstreamToolChoice(chat.plan.clientTools, call) } : {}),
          ...(tools.length ? { parallel_tool_calls: chat.plan.clientTools.parallel } : {}),
          ...(format ? { response_format: format } : {}),
        },
        {
          abort: branch.abort,
          // Only while another deployment could take the call: a last chance waits out `timeoutMs`
          // (and so does a JSON call, which shows nothing before it ends).
          firstTokenTimeoutMs: call.canFailOver ? fleet.routing.firstTokenTimeoutMs : undefined,
          admitted,
          // Nobody sees this call's text before it ends: one JSON answer, not a stream of events.
          json: !live,
          onData: (data) => assembler.push(data),
          onCompletion: (body) => assembler.pushCompletion(body),
          onDone: () => (sawDone = true),
          drained: sink.drained,
          traceHeaders: span.headers(),
          onAnswer: () => (inFlight.answered = true),
          // Accepted once the first upstream call answered 2xx (and its hold was granted): until
          // then every refusal (402, 503, the upstream's own 4xx) is still a plain HTTP error, and
          // after it the stream's keep-alives cover however long the model thinks or the tools run.
          onResponse: () => {
            if (chat.accepted) return;
            chat.accepted = true;
            sink.accepted({ promptTokens: call.promptTokens });
          },
        },
      );
    } finally {
      branch.release();
      fleet.end(deployment);
    }
    // Neither a finish_reason nor [DONE]: the stream broke off (Ollama ends it so on an error).
    if (!sawDone && assembler.endedWith === undefined) throw upstreamStreamCutOff(modelId);
    if (assembler.endedWith === 'abort') throw upstreamAborted(modelId);
    const round = assembler.finish();
    if (heldBack) chat.answer.push(heldBack);
    chat.inFlight = undefined;
    if (assembler.sawBareClose) deployment.reasoningInPrompt = true;
    if (fleet.several && chat.answeredBy.at(-1) !== deployment.name) chat.answeredBy.push(deployment.name);
    chat.tally.addCall(round, call.promptTokens);
    return round;
  }

  /**
   * Add the assistant's turn (every call in `round.calls`) to the conversation, run the gateway's
   * calls (`round.run`) and add their results. A round with nothing to run (only client calls) is no tool round.
   */
  private async runTools(
    chat: ChatRun,
    round: { text: string; calls: UpstreamToolCall[]; run: UpstreamToolCall[] },
    sink: ChatSink,
    abort: ChatAbort,
  ): Promise<void> {
    const { config } = this.deps;
    const assistant: UpstreamMessage = { role: 'assistant', content: round.text || null, tool_calls: round.calls };
    this.addMessage(chat, assistant);
    if (round.run.length === 0) return;
    chat.toolRounds++;
    sink.toolsRunning(round.run);
    const results = await runToolRound(round.run, {
      round: chat.toolRounds,
      runner: this.deps.tools,
      scope: chat.plan.toolScope,
      concurrency: config.chat.toolConcurrency,
      maxChars: config.chat.toolResultMaxChars,
      signal: abort.signal,
      trace: chat.span,
    });
    for (const m of results.messages) this.addMessage(chat, m);
    chat.trace.push(...results.trace);
    sink.toolsDone?.(
      results.trace,
      results.messages.map((m) => m.content),
    );
  }

  private addMessage(chat: ChatRun, m: UpstreamMessage): void {
    chat.messages.push(m);
    chat.tally.addMessage(m);
  }

  /** The loop ended with an answer: settle its cost and count it. */
  private async finishChat(
    chat: ChatRun,
    finishReason: FinishReason,
    clientToolCalls: UpstreamToolCall[],
    cutShort: ChatOutcome['cutShort'],
  ): Promise<ChatOutcome> {
    const modelId = chat.plan.model.id;
    const { usage } = chat.tally;
    if (chat.tally.estimated) {
      this.deps.logger.info({ model: modelId, usage }, 'upstream reported no usage: tokens estimated as ceil(characters / 4)');
    }
    const credits = await this.settle(chat, chatCost(usage), usedBy(chat, usage));
    if (chat.span.recording) {
      chat.span.set({
        [SWITCHYARD_CHAT_ROUNDS]: chat.toolRounds,
        [GEN_AI_RESPONSE_FINISH_REASONS]: [finishReason],
        [GEN_AI_USAGE_INPUT_TOKENS]: usage.prompt_tokens,
        [GEN_AI_USAGE_OUTPUT_TOKENS]: usage.completion_tokens,
        [SWITCHYARD_CREDITS_CHARGED]: credits?.charged,
      });
      chat.span.content(GEN_AI_OUTPUT_MESSAGES, () => [
        { role: 'assistant', parts: [{ type: 'text', content: chat.answer.text }], finish_reason: finishReason },
      ]);
    }
    const series = this.seriesOf(modelId);
    series.rounds.observe(chat.toolRounds);
    series.promptTokens.inc(usage.prompt_tokens);
    series.completionTokens.inc(usage.completion_tokens);
    if (credits) series.credits.inc(credits.charged);
    return {
      content: chat.answer.text,
      finishReason,
      ...(cutShort ? { cutShort } : {}),
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      toolTrace: chat.trace,
      credits,
      toolRounds: chat.toolRounds,
      ...(clientToolCalls.length ? { clientToolCalls } : {}),
      // Without the corrective exchange: the next turn sees the answer alone.
      conversation: chat.messages.slice(1, chat.correction?.from),
      ...(chat.answeredBy.length ? { deployments: chat.answeredBy } : {}),
    };
  }

  /**
   * The chat's cost charged (`Charge.settle`), as a ledger event on its span: its `ms` includes
   * the wait for the ledger's commit (the group commit's turn, or PostgreSQL's round trip).
   */
  private async settle(chat: ChatRun, cost: number, used: UsageDetail): Promise<ChatCredits | undefined> {
    const started = performance.now();
    const credits = await chat.billing.settle(cost, used);
    if (chat.span.recording) chat.span.event('switchyard.ledger.settle', { credits: credits?.charged ?? 0, ms: msSince(started) });
    return credits;
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
  private async settleAfterFailure(chat: ChatRun, cancelled: boolean): Promise<void> {
    const modelId = chat.plan.model.id;
    const { inFlight } = chat;
    const partial = inFlight?.assembler.abandon();
    // A call the upstream never answered (cancelled while connecting or waiting to retry) took no prompt.
    const consumed = chat.tally.consumedWith(inFlight?.answered ? partial : undefined, inFlight?.promptTokens ?? 0, cancelled);
    try {
      if (consumed.prompt_tokens + consumed.completion_tokens === 0) await chat.billing.release();
      else {
        const credits = await this.settle(chat, chatCost(consumed), usedBy(chat, consumed));
        if (credits) this.seriesOf(modelId).credits.inc(credits.charged);
      }
    } catch (err) {
      if (err instanceof InsufficientCredits) {
        // It ran holding nothing (Charge.claimChargeAtEnd) and the wallet was emptied meanwhile.
        this.deps.logger.warn(
          { wallet: chat.plan.wallet, model: modelId, owed: err.needed },
          'a failed chat found its wallet empty: nothing charged',
        );
        return;
      }
      // The reservation's TTL returns the credits if this fails; the chat's own error matters more.
      this.deps.logger.error({ err, model: modelId }, 'settling a failed chat failed');
    }
  }
}

function msSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

/** Where one attempt of an upstream call went, for its `chat` span. */
function deploymentAttributes(deployment: Deployment) {
  return {
    [SWITCHYARD_DEPLOYMENT]: deployment.name,
    [GEN_AI_REQUEST_MODEL]: deployment.upstreamModel,
    [SERVER_ADDRESS]: deployment.client.serverAddress,
    [SERVER_PORT]: deployment.client.serverPort,
  };
}

/** What the upstream said of a call that answered (usage as reported, when it reported any). */
function roundAttributes(round: AssembledRound) {
  return {
    [GEN_AI_USAGE_INPUT_TOKENS]: round.usage?.prompt_tokens,
    [GEN_AI_USAGE_OUTPUT_TOKENS]: round.usage?.completion_tokens,
    [GEN_AI_RESPONSE_FINISH_REASONS]: round.finishReason ? [round.finishReason] : undefined,
  };
}

/** A chat's usage record: every gateway tool that ran (failed runs too), and the tokens it pays for. */
function usedBy(chat: ChatRun, tokens: Pick<Usage, 'prompt_tokens' | 'completion_tokens'>): UsageDetail {
  const tools: Record<string, number> = {};
  for (const entry of chat.trace) tools[entry.tool] = (tools[entry.tool] ?? 0) + 1;
  return { tools, promptTokens: tokens.prompt_tokens, completionTokens: tokens.completion_tokens };
}

/** What the model reads after the preamble: instructions, the history, then the messages (kept rounds restored). */
function conversationOf(plan: ChatPlan, restored: UpstreamMessage[]): UpstreamMessage[] {
  return plan.history || plan.instructions ? [...(plan.instructions ?? []), ...(plan.history ?? []), ...restored] : restored;
}

/** Under a JSON format a call's text is not shown as it streams: the round's text (`AssembledRound.text`) is the candidate. */
function holdText(): void {}
