// The disks (P): each one's size and state, locked or unlocked read-only or read-write, and the
// moves away from that state.
import { h } from '../../dom.js'
import type { AppContext } from '../../view.js'

/** `:rw` covers every disk operation: unlock in either mode, and lock. */
const diskScope = (disk: number) => `storage:disk${disk}:rw`

const MODES: Record<string, string> = { '-': 'locked', ro: 'unlocked, read-only', rw: 'unlocked, read-write' }

export interface DisksPanel {
  readonly element: HTMLElement
  /** `status.storage` (one "<sectors>:<mode>" per disk), or none (E): drawn again only when it changed. */
  show(storage: string[] | undefined): void
}

/** `refresh` reads the device again after a move. */
export function disksPanel(ctx: AppContext, refresh: () => Promise<void>): DisksPanel {
  const element = h('section', { 'aria-labelledby': 'disks-title' })
  let shown: string | undefined
  return {
    element,
    show(storage) {
      if (JSON.stringify(storage) === shown) return
      shown = JSON.stringify(storage)
      element.replaceChildren(
        ...(storage
          ? [
              h('h3', { id: 'disks-title' }, 'Disks'),
              h(
                'p',
                { class: 'hint' },
                'A locked disk cannot be read. While the device is in the fail state it refuses every disk operation.',
              ),
              disksTable(storage, ctx, refresh),
            ]
          : []),
      )
    },
  }
}

/** One row per disk, with the moves away from its present mode. */
function disksTable(storage: string[], ctx: AppContext, refresh: () => Promise<void>): HTMLElement {
  const button = (label: string, disk: number, path: string, done: string) =>
    h(
      'button',
      {
        type: 'button',
        onclick: () =>
          void ctx.feedback.run(`${label}…`, async () => {
            await ctx.session.get(path, diskScope(disk))
            await refresh()
            return done
          }),
      },
      label,
    )
  const rows = storage.map((entry, disk) => {
    const [sectors = '', mode = ''] = entry.split(':')
    const size = `${sectors} sectors (${((Number(sectors) * 512) / 2 ** 20).toFixed(0)} MiB)`
    const name = `Disk ${disk}`
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, name),
      h('td', {}, size),
      h('td', {}, MODES[mode] ?? mode),
      h(
        'td',
        {},
        mode !== 'ro' &&
          button(`Unlock ${name} read-only`, disk, '/api/storage/unlock/ro', `${name} is unlocked, read-only.`),
        mode !== 'rw' &&
          button(`Unlock ${name} read-write`, disk, '/api/storage/unlock/rw', `${name} is unlocked, read-write.`),
        mode !== '-' && button(`Lock ${name}`, disk, '/api/storage/lock', `${name} is locked.`),
      ),
    )
  })
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...['Disk', 'Size', 'State', 'Actions'].map((col) => h('th', { scope: 'col' }, col)))),
      h('tbody', { id: 'disks' }, ...rows),
    ),
  )
}
