/**
 * The chat: a model picker, the conversation, and a streamed answer. The tool panel lists each
 * tool call as the stream announces it (`: tool <name>`), fills in its arguments, duration and
 * outcome as its round ends (`: tool_result <trace entry>`), settles on the final chunk's
 * `tool_trace`, and shows the credits charged.
 */
import { apiFetch, apiJson, ApiError, type ErrorObject } from './api.js';
import { byId, h, pretty } from './dom.js';
import { clearError, showError } from './errors-view.js';
import { readSse } from './sse.js';

interface Message {
  role: 'user' | 'assistant';
  content: string;
}

interface TraceEntry {
  round: number;
  tool: string;
  arguments: unknown;
  ok: boolean;
  duration_ms: number;
  error?: { code: string; message: string };
}

interface Chunk {
  choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
  tool_trace?: TraceEntry[];
  credits?: { charged: number; remaining: number };
  usage?: { prompt_tokens: number; completion_tokens: number };
  error?: ErrorObject;
}

export function setUpChat(afterAnswer: () => void): { loadModels(): Promise<void> } {
  const form = byId<HTMLFormElement>('chat-form');
  const input = byId<HTMLTextAreaElement>('chat-input');
  const send = byId<HTMLButtonElement>('chat-send');
  const stop = byId<HTMLButtonElement>('chat-stop');
  let answering: AbortController | undefined;
  // Closing the connection is how a client cancels: the gateway stops the model and the tools.
  stop.addEventListener('click', () => answering?.abort());
  const log = byId('chat-log');
  const picker = byId<HTMLSelectElement>('model');
  const history: Message[] = [];

  async function loadModels(): Promise<void> {
    try {
      const models = await apiJson<{ data: Array<{ id: string; aliases: string[] }> }>('v1/models');
      const chosen = picker.value;
      picker.replaceChildren(...models.data.map((m) => h('option', { value: m.id }, `${m.aliases[0] ?? m.id} (${m.id})`)));
      if (models.data.some((m) => m.id === chosen)) picker.value = chosen;
    } catch (err) {
      showError(err);
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    clearError();
    input.value = '';
    send.disabled = true;
    stop.hidden = false;
    answering = new AbortController();
    const { signal } = answering;
    history.push({ role: 'user', content: text });
    const question = h('div', { class: 'message user' }, text);
    const answer = h('div', { class: 'message assistant streaming' });
    log.append(question, answer);
    try {
      const content = await streamAnswer(picker.value, history, answer, signal);
      history.push({ role: 'assistant', content });
    } catch (err) {
      if (signal.aborted) {
        // Stopped: what came so far stays, marked, and is part of the conversation.
        answer.classList.add('stopped');
        answer.dataset.note = answer.textContent ? ' (stopped)' : '(stopped before any answer)';
        history.push({ role: 'assistant', content: answer.textContent ?? '' });
        byId('tool-summary').textContent = 'Stopped.';
        return;
      }
      // Unanswered: the question goes back into the box to send again, and out of the conversation.
      question.remove();
      answer.remove();
      history.pop();
      input.value = text;
      byId('tool-summary').textContent = 'The answer failed: see the error above.';
      showError(err);
    } finally {
      answer.classList.remove('streaming');
      send.disabled = false;
      stop.hidden = true;
      answering = undefined;
      afterAnswer();
    }
  });

  return { loadModels };
}

/** Stream one answer into `target`; returns its text, or throws an ApiError (before or inside the stream). */
async function streamAnswer(model: string, messages: Message[], target: HTMLElement, signal: AbortSignal): Promise<string> {
  const panel = toolPanel();
  const response = await apiFetch('v1/chat/completions', {
    body: { model: model || undefined, messages, stream: true, stream_options: { include_usage: true } },
    signal,
  });
  if (!response.body) throw new Error('The answer has no body.');
  let content = '';
  for await (const event of readSse(response.body)) {
    if ('comment' in event) {
      const started = /^tool (.+)$/.exec(event.comment)?.[1];
      if (started) panel.running(started);
      const finished = /^tool_result (\{.*\})$/.exec(event.comment)?.[1];
      if (finished) panel.done(JSON.parse(finished) as TraceEntry);
      continue;
    }
    if (event.data === '[DONE]') break;
    const chunk = JSON.parse(event.data) as Chunk;
    const delta = chunk.choices[0]?.delta.content;
    if (delta) {
      content += delta;
      target.textContent = content;
    }
    if (chunk.tool_trace) panel.finished(chunk.tool_trace);
    if (chunk.credits) panel.credits(`${chunk.credits.charged} credits charged, ${chunk.credits.remaining} left`);
    if (chunk.usage) panel.usage(chunk.usage);
    if (chunk.error) throw new ApiError(statusOf(chunk.error), chunk.error.code, chunk.error.message);
  }
  if (panel.isFree()) panel.credits('Nothing charged (free mode, or credits off)');
  return content;
}

function traceRow(entry: TraceEntry): HTMLElement {
  return h(
    'li',
    { class: `tool-row ${entry.ok ? 'ok' : 'failed'}`, 'data-tool': entry.tool },
    h('strong', {}, entry.tool),
    ` round ${entry.round} · ${Math.round(entry.duration_ms)} ms · `,
    h('span', { class: 'outcome' }, entry.ok ? 'ok' : `error ${entry.error?.code ?? ''}: ${entry.error?.message ?? ''}`),
    h('pre', { class: 'tool-args' }, pretty(entry.arguments)),
  );
}

/** An in-stream error came after a 200: its type names the status only for credits and limits. */
function statusOf(error: ErrorObject): number | null {
  const byType: Record<string, number> = { insufficient_credits_error: 402, rate_limit_error: 429 };
  return byType[error.type] ?? null;
}

/** The tool panel for one answer: rows as rounds start, completed from the trace at the end. */
function toolPanel() {
  const rows = byId('tool-rows');
  const summary = byId('tool-summary');
  rows.replaceChildren();
  summary.textContent = 'Waiting for the model…';
  let charged = false;
  /** Rows of calls announced and not finished yet, in order. */
  const running: HTMLElement[] = [];
  return {
    running(tool: string) {
      const row = h('li', { class: 'tool-row running', 'data-tool': tool }, h('strong', {}, tool), ' running…');
      running.push(row);
      rows.append(row);
      summary.textContent = `Running ${tool}…`;
    },
    done(entry: TraceEntry) {
      const index = running.findIndex((row) => row.dataset.tool === entry.tool);
      const row = traceRow(entry);
      if (index === -1) rows.append(row);
      else running.splice(index, 1)[0].replaceWith(row);
      summary.textContent = running.length ? `Running ${running.map((r) => r.dataset.tool).join(', ')}…` : 'Waiting for the model…';
    },
    finished(trace: TraceEntry[]) {
      running.length = 0;
      rows.replaceChildren(...trace.map(traceRow));
      summary.textContent = trace.length ? `${trace.length} tool call(s)` : 'No tools were needed.';
    },
    credits(text: string) {
      charged = true;
      byId('chat-credits').textContent = text;
    },
    usage(usage: { prompt_tokens: number; completion_tokens: number }) {
      byId('chat-usage').textContent = `${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens`;
    },
    isFree: () => !charged,
  };
}
