// The management app: log in with the passphrase, show the device, lock and unlock its disks.
import { DeviceError, DeviceSession, deviceRequest } from './device-session.js'

/** Status and version with extras (repo_stats, sd_csd, sd_cid); also what login checks the passphrase with. */
const CONFIG_SCOPE = 'system:config'
const LOGGER_SCOPE = 'logger:get'
/** `:rw` covers every disk operation: unlock in either mode, and lock. */
const diskScope = (disk: number) => `storage:disk${disk}:rw`

const MODES: Record<string, string> = { '-': 'locked', ro: 'unlocked, read-only', rw: 'unlocked, read-write' }

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id)
  if (!element) throw new Error(`the page has no #${id}`)
  return element as T
}

const ui = {
  error: byId<HTMLParagraphElement>('error'),
  notice: byId<HTMLParagraphElement>('notice'),
  login: byId<HTMLElement>('login'),
  loginForm: byId<HTMLFormElement>('login-form'),
  passphrase: byId<HTMLInputElement>('passphrase'),
  session: byId<HTMLElement>('session'),
  who: byId<HTMLSpanElement>('who'),
  refresh: byId<HTMLButtonElement>('refresh'),
  logout: byId<HTMLButtonElement>('logout'),
  status: byId<HTMLDListElement>('status'),
  version: byId<HTMLDListElement>('version'),
  disks: byId<HTMLTableSectionElement>('disks'),
  audit: byId<HTMLElement>('audit'),
  logSummary: byId<HTMLParagraphElement>('log-summary'),
  logs: byId<HTMLOListElement>('logs'),
}

let session: DeviceSession | undefined
let busy = false

function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag)
  if (text !== undefined) made.textContent = text
  return made
}

/**
 * Runs one user action at a time: its progress in the status line, its outcome there or, when
 * it fails, in the alert. Actions asked for meanwhile are dropped (a double click).
 */
async function run(doing: string, action: () => Promise<string>): Promise<void> {
  if (busy) return
  busy = true
  document.body.setAttribute('aria-busy', 'true')
  ui.error.hidden = true
  ui.notice.textContent = doing
  try {
    ui.notice.textContent = await action()
  } catch (error) {
    ui.notice.textContent = ''
    ui.error.textContent = error instanceof DeviceError ? error.message : `Something went wrong: ${String(error)}`
    ui.error.hidden = false
  } finally {
    busy = false
    document.body.removeAttribute('aria-busy')
  }
}

/** With a session, under its token for `scope`; without, as anyone may. */
function read(path: string, scope: string): Promise<unknown> {
  return session ? session.get(path, scope) : deviceRequest(path)
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return value.map(describe).join(', ')
  if (typeof value === 'object' && value !== null)
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${describe(v)}`)
      .join(', ')
  return String(value)
}

function showFields(list: HTMLDListElement, fields: Record<string, unknown>): void {
  list.replaceChildren(
    ...Object.entries(fields).flatMap(([name, value]) => [element('dt', name), element('dd', describe(value))]),
  )
}

function diskButton(label: string, disk: number, path: string, done: string): HTMLButtonElement {
  const button = element('button', label)
  button.type = 'button'
  button.addEventListener('click', () => {
    void run(`${label}…`, async () => {
      await session?.get(path, diskScope(disk))
      await refresh()
      return done
    })
  })
  return button
}

/** `status.storage`: one "<sectors>:<mode>" per disk. Offers the moves away from the present mode. */
function showDisks(storage: string[]): void {
  ui.disks.replaceChildren(
    ...storage.map((entry, disk) => {
      const [sectors = '', mode = ''] = entry.split(':')
      const row = element('tr')
      const name = element('th', `Disk ${disk}`)
      name.scope = 'row'
      const size = `${sectors} sectors (${((Number(sectors) * 512) / 2 ** 20).toFixed(0)} MiB)`
      const actions = element('td')
      if (session) {
        if (mode !== 'ro')
          actions.append(
            diskButton(
              `Unlock Disk ${disk} read-only`,
              disk,
              '/api/storage/unlock/ro',
              `Disk ${disk} is unlocked, read-only.`,
            ),
          )
        if (mode !== 'rw')
          actions.append(
            diskButton(
              `Unlock Disk ${disk} read-write`,
              disk,
              '/api/storage/unlock/rw',
              `Disk ${disk} is unlocked, read-write.`,
            ),
          )
        if (mode !== '-')
          actions.append(diskButton(`Lock Disk ${disk}`, disk, '/api/storage/lock', `Disk ${disk} is locked.`))
      }
      row.append(name, element('td', size), element('td', MODES[mode] ?? mode), actions)
      return row
    }),
  )
}

/** Every journal file id, oldest first, a page (at most 128) at a time. */
async function logIds(): Promise<string[]> {
  const ids: string[] = []
  for (;;) {
    const page = (await read(`/api/logger/list/${ids.length}`, LOGGER_SCOPE)) as { total: number; id: string[] }
    ids.push(...page.id)
    if (page.id.length === 0 || ids.length >= page.total) return ids
  }
}

/** Shows what the device says now; returns its status. */
async function refresh(): Promise<Record<string, unknown>> {
  const [status, version] = (await Promise.all([
    read('/api/system/status', CONFIG_SCOPE),
    read('/api/system/version', CONFIG_SCOPE),
  ])) as Record<string, unknown>[]
  const { storage, ...rest } = status!
  showFields(ui.status, rest)
  showFields(ui.version, version!)
  showDisks(Array.isArray(storage) ? storage.map(String) : [])
  ui.audit.hidden = !session
  if (session) {
    const ids = await logIds()
    ui.logSummary.textContent = `${ids.length} journal ${ids.length === 1 ? 'file' : 'files'}, oldest first.`
    ui.logs.replaceChildren(...ids.map((id) => element('li', id)))
  } else {
    ui.logs.replaceChildren()
  }
  return status!
}

function showSession(): void {
  ui.login.hidden = session !== undefined
  ui.session.hidden = session === undefined
  ui.who.textContent = session ? `Logged in as ${session.user}.` : ''
}

ui.loginForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void run('Logging in (deriving the key takes a moment)…', async () => {
    // Out of the page at once: the derived key is all the session keeps.
    const passphrase = ui.passphrase.value
    ui.passphrase.value = ''
    session = await DeviceSession.open(passphrase, CONFIG_SCOPE)
    showSession()
    await refresh()
    return ''
  })
})

ui.refresh.addEventListener('click', () => {
  void run('Refreshing…', async () => {
    await refresh()
    return ''
  })
})

ui.logout.addEventListener('click', () => {
  void run('Logging out…', async () => {
    session = undefined
    showSession()
    ui.passphrase.focus()
    await refresh()
    return 'Logged out.'
  })
})

void run('Reading the device…', async () => {
  const status = await refresh()
  return status.inited === false ? 'This device has no owner yet: personalise it first (hemctl init).' : ''
})
