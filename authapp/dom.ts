// Plain DOM, a little shorter: the page's only "framework" (the management app has its own; rooms do not share).

export type Child = Node | string | false | null | undefined
/** Attributes by name; `true` sets a boolean attribute, `false`/undefined omits it; `on<event>` adds a listener. */
export type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') made.addEventListener(name.slice(2), value)
    else if (value === true) made.setAttribute(name, '')
    else if (value !== false && value !== undefined) made.setAttribute(name, String(value))
  }
  for (const child of children) if (child !== false && child !== null && child !== undefined) made.append(child)
  return made
}

export function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id)
  if (!element) throw new Error(`the page has no #${id}`)
  return element as T
}

let lastId = 0
/** An id unique in this page, for label `for` and `aria-labelledby`. */
export function uid(prefix: string): string {
  lastId += 1
  return `${prefix}-${lastId}`
}

/** Terms and their descriptions; a term whose description is empty is left out. */
export function facts(rows: readonly (readonly [string, string | undefined])[]): HTMLDListElement {
  const list = h('dl')
  for (const [term, description] of rows) if (description) list.append(h('dt', {}, term), h('dd', {}, description))
  return list
}
