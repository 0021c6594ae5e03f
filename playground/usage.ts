/**
 * The usage table: the caller's usage records from `GET /credits/usage`, newest first, a page at
 * a time (older / newer by the API's cursor), or their totals per day, model or key for the
 * chosen kind. Loaded while the section is open (it costs a request of the wallet's budget), and
 * then again after every chat and tool run.
 */
import { ApiError, apiJson } from './api.js';
import { byId, h } from './dom.js';

interface UsageRecord {
  id: string;
  at: string;
  kind: string;
  key_id: string | null;
  model: string | null;
  tools: Record<string, number>;
  prompt_tokens: number;
  completion_tokens: number;
  credits: number;
  source_id: string | null;
}

interface UsageTotal {
  group: string | null;
  records: number;
  spent: number;
  added: number;
  prompt_tokens: number;
  completion_tokens: number;
}

const PAGE_SIZE = 10;
/** Kinds that add credits: shown as +N, every other kind as −N. */
const ADDING = new Set(['grant', 'deposit', 'x402']);

export function setUpUsage(): { refresh(): Promise<void> } {
  const view = byId<HTMLSelectElement>('usage-view');
  const kind = byId<HTMLSelectElement>('usage-kind');
  const table = byId<HTMLTableElement>('usage-table');
  const older = byId<HTMLButtonElement>('usage-older');
  const newer = byId<HTMLButtonElement>('usage-newer');
  const pageLabel = byId('usage-page');
  const section = byId<HTMLDetailsElement>('usage');
  /** The cursors of the pages shown so far: the last is this page's ('' for the first). */
  let cursors: string[] = [''];
  let next: string | null = null;

  function query(): string {
    const params = new URLSearchParams();
    if (kind.value) params.set('kind', kind.value);
    if (view.value === 'records') {
      params.set('limit', String(PAGE_SIZE));
      const cursor = cursors[cursors.length - 1];
      if (cursor) params.set('cursor', cursor);
    } else {
      params.set('group_by', view.value);
    }
    return params.toString();
  }

  function showRecords(records: UsageRecord[]): void {
    table.replaceChildren(
      h(
        'thead',
        {},
        h('tr', {}, ...['When (UTC)', 'Kind', 'Model', 'Tools', 'Tokens in / out', 'Credits', 'Key'].map((t) => h('th', {}, t))),
      ),
      h(
        'tbody',
        {},
        ...records.map((r) =>
          h(
            'tr',
            { 'data-kind': r.kind },
            h('td', {}, r.at.replace('T', ' ').slice(0, 19)),
            h('td', {}, r.kind),
            h('td', {}, r.model ?? '—'),
            h(
              'td',
              {},
              Object.entries(r.tools)
                .map(([name, count]) => (count > 1 ? `${name} ×${count}` : name))
                .join(', ') || '—',
            ),
            h('td', { class: 'number' }, r.prompt_tokens || r.completion_tokens ? `${r.prompt_tokens} / ${r.completion_tokens}` : '—'),
            h('td', { class: 'number' }, `${ADDING.has(r.kind) ? '+' : '−'}${r.credits}`),
            h('td', {}, r.key_id ?? (r.source_id ? `source ${r.source_id}` : '—')),
          ),
        ),
      ),
    );
    if (records.length === 0) table.append(h('caption', {}, 'No usage yet.'));
  }

  function showTotals(totals: UsageTotal[], by: string): void {
    table.replaceChildren(
      h('thead', {}, h('tr', {}, ...[by, 'Records', 'Spent', 'Added', 'Tokens in', 'Tokens out'].map((t) => h('th', {}, t)))),
      h(
        'tbody',
        {},
        ...totals.map((t) =>
          h(
            'tr',
            {},
            h('td', {}, t.group ?? '—'),
            ...[t.records, t.spent, t.added, t.prompt_tokens, t.completion_tokens].map((n) => h('td', { class: 'number' }, String(n))),
          ),
        ),
      ),
    );
    if (totals.length === 0) table.append(h('caption', {}, 'No usage yet.'));
  }

  async function refresh(): Promise<void> {
    if (!section.open) return;
    try {
      if (view.value === 'records') {
        const page = await apiJson<{ data: UsageRecord[]; next_cursor: string | null }>(`credits/usage?${query()}`);
        next = page.next_cursor;
        showRecords(page.data);
        pageLabel.textContent = `page ${cursors.length}`;
      } else {
        const totals = await apiJson<{ data: UsageTotal[] }>(`credits/usage?${query()}`);
        next = null;
        showTotals(totals.data, view.value);
        pageLabel.textContent = 'totals';
      }
      older.disabled = next === null;
      newer.disabled = cursors.length <= 1 || view.value !== 'records';
    } catch (err) {
      // In the table, not the page's banner: a table that cannot load must not hide why a chat failed.
      table.replaceChildren(h('caption', { class: 'failed' }, `Usage not loaded: ${err instanceof ApiError ? err.message : String(err)}`));
      older.disabled = true;
      newer.disabled = true;
    }
  }

  const restart = () => {
    cursors = [''];
    void refresh();
  };
  view.addEventListener('change', restart);
  kind.addEventListener('change', restart);
  byId('usage-refresh').addEventListener('click', restart);
  section.addEventListener('toggle', restart);
  older.addEventListener('click', () => {
    if (next === null) return;
    cursors.push(next);
    void refresh();
  });
  newer.addEventListener('click', () => {
    if (cursors.length <= 1) return;
    cursors.pop();
    void refresh();
  });

  return {
    refresh: async () => {
      // New records arrive at the top: a refresh shows the newest page.
      cursors = [''];
      await refresh();
    },
  };
}
