/**
 * A form for a tool's arguments, generated from its JSON Schema: a select for enums, a checkbox
 * for booleans, a number field for numbers, a text field for strings, and a JSON text area for
 * anything else (arrays, objects). `read()` returns the arguments or throws naming the field.
 */
import { h } from './dom.js';

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  default?: unknown;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
};

export interface JsonForm {
  element: HTMLElement;
  read(): Record<string, unknown>;
}

export function jsonForm(schema: Schema): JsonForm {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, property]) => field(name, nonNull(property), required.has(name)));
  const element = h('div', { class: 'json-form' }, ...fields.map((f) => f.element));
  if (fields.length === 0) element.append(h('p', { class: 'hint' }, 'This tool takes no arguments.'));
  return {
    element,
    read() {
      const args: Record<string, unknown> = {};
      for (const f of fields) {
        const value = f.read();
        if (value !== undefined) args[f.name] = value;
      }
      return args;
    },
  };
}

/** `anyOf: [X, {type: null}]` (an optional field) is X. */
function nonNull(schema: Schema): Schema {
  const options = schema.anyOf?.filter((s) => s.type !== 'null');
  return options?.length === 1 ? { ...options[0], description: schema.description ?? options[0].description } : schema;
}

function field(name: string, schema: Schema, required: boolean): { name: string; element: HTMLElement; read(): unknown } {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const id = `arg-${name}`;
  const label = h('label', { for: id }, name, required ? h('span', { class: 'required', title: 'required' }, ' *') : null);
  const hint = schema.description ? h('span', { class: 'hint' }, schema.description) : null;
  const missing = () => {
    if (required) throw new Error(`${name} is required.`);
    return undefined;
  };

  if (schema.enum) {
    const select = h('select', { id, name }, h('option', { value: '' }, required ? 'choose…' : '(none)'));
    for (const option of schema.enum) select.append(h('option', { value: JSON.stringify(option) }, String(option)));
    if (schema.default !== undefined) select.value = JSON.stringify(schema.default);
    return {
      name,
      element: h('div', { class: 'field' }, label, select, hint),
      read: () => (select.value ? (JSON.parse(select.value) as unknown) : missing()),
    };
  }
  if (type === 'boolean') {
    const box = h('input', { id, name, type: 'checkbox', checked: schema.default === true });
    return { name, element: h('div', { class: 'field checkbox' }, box, label, hint), read: () => box.checked };
  }
  if (type === 'number' || type === 'integer') {
    const input = h('input', { id, name, type: 'number', step: type === 'integer' ? '1' : 'any' });
    if (typeof schema.default === 'number') input.placeholder = String(schema.default);
    return {
      name,
      element: h('div', { class: 'field' }, label, input, hint),
      read: () => (input.value === '' ? missing() : Number(input.value)),
    };
  }
  if (type === 'string') {
    const input = h('input', { id, name, type: 'text', autocomplete: 'off' });
    if (typeof schema.default === 'string') input.placeholder = schema.default;
    return { name, element: h('div', { class: 'field' }, label, input, hint), read: () => (input.value === '' ? missing() : input.value) };
  }
  const jsonHint = schema.description ? `JSON: ${schema.description}` : 'JSON';
  const area = h('textarea', { id, name, rows: '3', placeholder: type === 'array' ? '["…"]' : '{"…": …}' });
  return {
    name,
    element: h('div', { class: 'field' }, label, area, h('span', { class: 'hint' }, jsonHint)),
    read() {
      if (area.value.trim() === '') return missing();
      try {
        return JSON.parse(area.value) as unknown;
      } catch {
        throw new Error(`${name} must be JSON.`);
      }
    },
  };
}
