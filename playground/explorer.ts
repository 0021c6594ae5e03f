/**
 * The tool explorer: every tool from `GET /v1/tools`, a form generated from the chosen tool's
 * JSON Schema, a run through `POST /v1/tools/execute`, and the JSON result.
 */
import { apiJson } from './api.js';
import { byId, h, pretty } from './dom.js';
import { clearError, showError } from './errors-view.js';
import { jsonForm, type JsonForm } from './json-form.js';

interface Tool {
  name: string;
  description: string;
  server: string;
  input_schema: Record<string, unknown>;
}

export function setUpExplorer(afterRun: () => void): { loadTools(): Promise<void> } {
  const picker = byId<HTMLSelectElement>('tool');
  const description = byId('tool-description');
  const formHost = byId('tool-form');
  const result = byId('tool-result');
  const run = byId<HTMLButtonElement>('tool-run');
  let tools: Tool[] = [];
  let form: JsonForm | undefined;

  function choose(name: string): void {
    const tool = tools.find((t) => t.name === name);
    result.textContent = '';
    if (!tool) {
      form = undefined;
      formHost.replaceChildren();
      description.textContent = '';
      return;
    }
    description.textContent = `${tool.description} (server: ${tool.server})`;
    form = jsonForm(tool.input_schema);
    formHost.replaceChildren(form.element);
  }

  async function loadTools(): Promise<void> {
    try {
      tools = (await apiJson<{ tools: Tool[] }>('v1/tools')).tools;
      const chosen = picker.value;
      picker.replaceChildren(...tools.map((t) => h('option', { value: t.name }, t.name)));
      picker.value = tools.some((t) => t.name === chosen) ? chosen : (tools[0]?.name ?? '');
      choose(picker.value);
    } catch (err) {
      showError(err);
    }
  }

  picker.addEventListener('change', () => choose(picker.value));
  run.addEventListener('click', async () => {
    if (!form) return;
    clearError();
    result.textContent = '';
    run.disabled = true;
    try {
      const answer = await apiJson<{ result: unknown }>('v1/tools/execute', { body: { tool: picker.value, args: form.read() } });
      result.textContent = pretty(answer.result);
    } catch (err) {
      showError(err);
    } finally {
      run.disabled = false;
      afterRun();
    }
  });

  return { loadTools };
}
