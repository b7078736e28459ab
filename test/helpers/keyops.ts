// The "Use this key" section in Chromium: open a key, its operations' forms, what they show, and
// the scope of every token the page sent to a crypto route.
import type { Page, Locator } from 'playwright-core'
import type { OpenApp } from './app.js'
import { api, Tokens } from './keys.js'

export interface KeyopsPage {
  /** Opens the key's details (on whichever page of the list holds it) and waits for its operations. */
  open(kid: string): Promise<Locator>
  /** An operation's form by its title (opened). */
  operation(title: string): Promise<Locator>
  /** Each crypto request the page made: its path, the body's kid and its token's scope. */
  readonly sent: { path: string; kid: string; scope: string }[]
}

const exactly = (text: string) => new RegExp(`^${text.replace(/[()]/g, '\\$&')}$`)

/** The claims of a bearer token (a JWT the device signed), as the page sent it. */
function scopeOf(authorization: string | undefined): string {
  const payload = authorization?.replace(/^Bearer /, '').split('.')[1] ?? ''
  return (JSON.parse(Buffer.from(payload, 'base64url').toString()) as { scope: string }).scope
}

export function keyopsPage(app: OpenApp): KeyopsPage {
  const { page } = app
  const sent: KeyopsPage['sent'] = []
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname
    if (!path.startsWith('/api/crypto/')) return
    const { kid } = request.postDataJSON() as { kid: string }
    sent.push({ path, kid, scope: scopeOf(request.headers().authorization) })
  })
  const uses = page.getByRole('region', { name: 'Use this key' })
  return {
    sent,
    async open(kid) {
      const next = page.getByRole('button', { name: 'Next page' })
      const openKey = page.getByRole('button', { name: new RegExp(`^Open key .* \\(${kid}\\)$`) })
      while (!(await openKey.isVisible())) await next.click()
      await openKey.click()
      await page.getByRole('definition').filter({ hasText: kid }).waitFor()
      await uses.getByRole('heading', { name: 'Use this key' }).waitFor()
      return uses
    },
    async operation(title) {
      const form = uses.locator('details.key-use').filter({ has: page.locator('summary', { hasText: exactly(title) }) })
      if ((await form.getAttribute('open')) === null) await form.locator('summary').click()
      return form
    },
  }
}

/** The requests whose token was not exactly the scope of the body's key (none, when the page is right). */
export const otherScopes = (ops: KeyopsPage) => ops.sent.filter(({ kid, scope }) => scope !== `keymgmt:use:${kid}`)

/** The titles of the operations offered for the open key. */
export const offered = (page: Page) =>
  page.getByRole('region', { name: 'Use this key' }).locator('details.key-use > summary').allTextContents()

/** An output's base64, by its heading ("Ciphertext"), in `form`. */
export async function outputOf(form: Locator, name: string): Promise<Buffer> {
  const shown = form
    .locator('.op-output')
    .filter({ has: form.page().locator('h5', { hasText: new RegExp(`^${name} \\(`) }) })
  return Buffer.from((await shown.locator('code').textContent()) ?? '', 'base64')
}

/** Waits for the status line to say `text` (the end of an action). */
export const done = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor()

/** axe in light and dark: the violations of both, each marked with its scheme. */
export async function bothSchemes(app: Pick<OpenApp, 'page' | 'violations'>): Promise<string[]> {
  const light = await app.violations()
  await app.page.emulateMedia({ colorScheme: 'dark' })
  const dark = await app.violations()
  await app.page.emulateMedia({ colorScheme: 'light' })
  return [...light.map((v) => `light: ${v}`), ...dark.map((v) => `dark: ${v}`)]
}

/** Imports a public key with the API; its KID. */
export async function importKey(app: OpenApp, tokens: Tokens, type: string, label: string, pubkey: Uint8Array) {
  const body = { label, type, pubkey: Buffer.from(pubkey).toString('base64') }
  return (await api(`${app.o.https}/api/keymgmt/import`, await tokens.get('keymgmt:imp'), body)).json.kid as string
}

/** A key's public key, as the API gives it. */
export async function publicKeyOf(app: OpenApp, tokens: Tokens, kid: string): Promise<Buffer> {
  const answer = await api(`${app.o.https}/api/keymgmt/get/${kid}`, await tokens.get('keymgmt:get'))
  return Buffer.from(answer.json.pubkey, 'base64')
}

/** A crypto route called with the API under the key's own scope (to check what the page made). */
export async function useApi(
  app: OpenApp,
  tokens: Tokens,
  route: string,
  body: Record<string, unknown> & { kid: string },
) {
  const token = await tokens.get(`keymgmt:use:${body.kid}`)
  return api(`${app.o.https}/api/crypto/${route}`, token, body)
}
