// Plain DOM, a little shorter: the app's only "framework".

export type Child = Node | string | number | false | null | undefined
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
  append(made, children)
  return made
}

export function append(parent: Element, children: Child[]): void {
  for (const child of children)
    if (child !== false && child !== null && child !== undefined)
      parent.append(typeof child === 'number' ? String(child) : child)
}

export function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id)
  if (!element) throw new Error(`the page has no #${id}`)
  return element as T
}

let lastId = 0
/** An id unique in this page, for label `for` and `aria-describedby`. */
export function uid(prefix: string): string {
  lastId += 1
  return `${prefix}-${lastId}`
}

/**
 * A form control with its visible label and, when given, a hint (the contract's rule, shown
 * before sending) that the control is described by.
 */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
) {
  control.id ||= uid('field')
  const children: Child[] = [h('label', { for: control.id }, label), control]
  if (hint) {
    const hintId = uid('hint')
    control.setAttribute('aria-describedby', hintId)
    children.push(h('p', { id: hintId, class: 'hint' }, hint))
  }
  return h('div', { class: 'field' }, ...children)
}

/** A passphrase's input: never echoed, never spell-checked (which would send it to a dictionary service). */
export const password = (autocomplete: string) => h('input', { type: 'password', autocomplete, spellcheck: 'false' })

/** A select of `options` ([value, label]), `selected` chosen. */
export function select(name: string, options: readonly (readonly [string, string])[], selected?: string) {
  return h(
    'select',
    { name },
    ...options.map(([value, label]) => h('option', { value, selected: value === selected }, label)),
  )
}

/** Saves bytes as a file the browser downloads, named `name`. */
export function saveFile(name: string, bytes: Uint8Array | string, type = 'application/octet-stream'): void {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type }))
  const link = h('a', { href: url, download: name, hidden: true })
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
