/** A tiny element builder: `h('button', { class: 'primary', onclick }, 'Send')`. Text is always set as text, never as HTML. */
type Attributes = Record<string, string | boolean | EventListener | undefined>;
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, value);
  }
  element.append(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
  return element;
}

/** The element with this id, which the page must have. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no #${id}`);
  return element as T;
}

/** JSON for people: indented, and long strings kept whole. */
export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
