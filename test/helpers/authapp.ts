// The web authenticator in Chromium against a real hem-cloud (in this process, on the real clock: the device's
// authreq `iat` must be the broker's now within 30 s) that serves it, and the owner's side of the flows run with
// the client library against a real device: what the management app or hemctl does while the phone answers.
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Test } from 'tap'
import type { Locator, Page } from 'playwright-core'
import { BrokerClient, pairingQrPayload, type EventState, type HemClient } from '../../client/index.js'
import { AUTHAPP_OUT } from '../../deploy/build-authapp.js'
import { accessibilityViolations, openPage } from './browser.js'
import { testCloud, type TestCloud } from './cloud.js'
import { repoRoot } from './device.js'
import { owned, ownerClient, type Owned } from './owner.js'
import { until } from './until.js'

/** The phone's viewport: the page is laid out for it first. */
export const PHONE = { width: 390, height: 844 }

export interface OpenAuthapp extends AuthappParts {
  /** The page's own URL: `<cloud>/authenticator/`. */
  url: string
  page: Page
  /** Script errors, console errors (a CSP violation is one) and failed files so far; none at a passing end. */
  problems: string[]
}

/** The owner's client of the device and of the broker: the other half of every flow the phone answers. */
export interface OwnerSide {
  client: HemClient
  broker: BrokerClient
  /** Sequence A up to the QR code: its JSON payload; `finish` completes the pairing once the phone accepted. */
  startPairing(): Promise<{ payload: string; link: string; finish(): Promise<{ kid: string; pid: string }> }>
  /** Sequence B up to the event: `outcome` waits for the phone's answer; `withdraw` gives up on it. */
  askApproval(scope: string): Promise<{ eventid: string; outcome(): Promise<EventState>; withdraw(): Promise<unknown> }>
}

/** dist-authapp/ as deploy/setup.sh built it; refused when a source of the page changed since (run the set-up). */
async function builtPage(): Promise<void> {
  const built = await stat(join(AUTHAPP_OUT, 'app.js')).catch(() => undefined)
  const sources = await readdir(join(repoRoot, 'authapp'), { withFileTypes: true })
  const times = await Promise.all(sources.map(async (e) => (await stat(join(e.parentPath, e.name))).mtimeMs))
  if (!built || times.some((mtime) => mtime > built.mtimeMs))
    throw new Error('dist-authapp/ is missing or older than authapp/: run bash deploy/setup.sh --quiet')
}

export function ownerSide(o: Owned, cloud: TestCloud): OwnerSide {
  const client = ownerClient(o.https)
  const broker = new BrokerClient({ url: cloud.cloud.url })
  return {
    client,
    broker,
    async startPairing() {
      const identity = await client.pairingIdentity()
      const { epk } = await broker.deviceSession(identity.eid)
      const { request, eid } = await client.extInit(epk)
      const { rid, link } = await broker.registerInit({ epk, eid, request })
      return {
        payload: pairingQrPayload(link, request, identity),
        link,
        async finish() {
          let replied: { pid: string; reply: string } | undefined
          await until(
            'the phone replied to the pairing',
            async () => {
              const state = await broker.registerCheck(rid)
              if (state.state === 'closed') throw new Error(`the registration closed: ${state.reason}`)
              if (state.state === 'replied') replied = state
              return replied !== undefined
            },
            { rethrow: true },
          )
          const validated = await client.extValidate(replied!.pid, replied!.reply)
          const { pid } = await broker.registerFinalise(rid, validated)
          return { kid: validated.kid, pid }
        },
      }
    },
    async askApproval(scope) {
      const { epk } = await broker.anonymousSession()
      const requested = await client.extRequest({ epk, scope })
      const { eventid, sentcnt } = await broker.eventNew(requested)
      if (sentcnt !== 1) throw new Error(`the event reached ${sentcnt} authenticators, not the one paired`)
      return {
        eventid,
        async outcome() {
          let state: EventState = { state: 'pending' }
          await until(
            'the phone answered',
            async () => {
              state = await broker.eventCheck(eventid)
              return state.state !== 'pending'
            },
            { rethrow: true },
          )
          return state
        },
        withdraw: () => broker.eventDelete(eventid),
      }
    },
  }
}

/** The parts the page works with: an owned device, a hem-cloud serving the built page, the owner's side. */
export interface AuthappParts {
  o: Owned
  cloud: TestCloud
  owner: OwnerSide
}

export async function authappParts(t: Test): Promise<AuthappParts> {
  await builtPage()
  const o = await owned(t)
  const cloud = await testCloud(t, { clock: Date.now })
  return { o, cloud, owner: ownerSide(o, cloud) }
}

/** The page open in a fresh browser context at phone width; `args`: Chromium flags, in a browser of its own. */
export async function openAuthappPage(t: Test, parts: AuthappParts, args: string[] = []): Promise<OpenAuthapp> {
  const { page, problems } = await openPage(t, { args })
  await page.setViewportSize(PHONE)
  const url = `${parts.cloud.cloud.url}/authenticator/`
  await page.goto(url)
  await page.getByRole('heading', { name: 'Paired devices' }).waitFor()
  return { ...parts, url, page, problems }
}

/** An owned device, a hem-cloud serving the built page, and the page open: nothing paired yet. */
export async function openAuthapp(t: Test): Promise<OpenAuthapp> {
  return openAuthappPage(t, await authappParts(t))
}

/**
 * Pairs the page with the device as its owner would, by pasting the QR code's text: `beforeAccept` sees the offer
 * shown. Resolves once the device has stored the pairing and the broker made it active.
 */
export async function pairByPasting(
  app: OpenAuthapp,
  beforeAccept: (offer: Locator) => Promise<void> = async () => {},
): Promise<{ kid: string; pid: string }> {
  const { page } = app
  const pairing = await app.owner.startPairing()
  await page.getByLabel("Or paste the pairing link or the QR code's text").fill(pairing.payload)
  await page.getByRole('button', { name: 'Read the invitation' }).click()
  const offer = page.getByRole('article', { name: 'Pair with hem.example?' })
  await offer.waitFor()
  await beforeAccept(offer)
  await offer.getByRole('button', { name: 'Accept' }).click()
  const paired = await pairing.finish()
  await page.getByRole('status').filter({ hasText: 'Paired with hem.example.' }).waitFor()
  return paired
}

/** axe's WCAG A/AA violations in light and in dark mode, each named by its mode. */
export async function violationsInBothModes(page: Page): Promise<string[]> {
  const found: string[] = []
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    found.push(...(await accessibilityViolations(page)).map((v) => `${colorScheme}: ${v}`))
  }
  await page.emulateMedia({ colorScheme: 'light' })
  return found
}

/** Whether the page scrolls sideways at its width (it must not at 390 px). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement
    return root.scrollWidth > root.clientWidth
  })
}
