// The management app with the family's cloud: a real device naming the built `hem-cloud` (test mode) as its app's
// cloud (hemd --cloud), the app open in Chromium, and a phone played in this process by the authenticator's core
// (an in-memory store, noble's keys sealed under a random key).
import { randomBytes } from 'node:crypto'
import jsqr from 'jsqr'
import type { Test } from 'tap'
import {
  Authenticator,
  fetchTransport,
  MemoryPairingStore,
  NobleKeys,
  parsePairingInvite,
  type Approval,
} from '../../authenticator/index.js'
import { keySealer } from '../../cli/hem-authenticator/passphrase-sealer.js'
import { BrokerClient, type HemClient } from '../../client/index.js'
import { openApp, type OpenApp } from './app.js'
import type { QrModules } from './authapp-camera.js'
import { cloudProcess } from './ext-e2e.js'
import { ownerClient } from './owner.js'
import { until } from './until.js'

export const PHONE_LABEL = 'Test phone'

export interface AppWithCloud extends OpenApp {
  /** The cloud's base URL (http on loopback). */
  cloudUrl: string
  broker: BrokerClient
  /** The owner's client library on the device (the user's passphrase). */
  client: HemClient
  phone: Authenticator<string>
  /** Pairs the phone through the device API and the broker, as hemctl auth pair does; answers the KID. */
  pairByApi(): Promise<{ kid: string; pid: string }>
  /** The phone's next pending event, opened (waits for it). */
  nextApproval(): Promise<Approval>
  /** The pairings as the device and the broker list them (the device's proof for the broker). */
  bothSides(): Promise<{ device: string[]; broker: string[] }>
  /**
   * `problems` but the cloud's statuses: a 410 of `register/check` or `event/check` is the contract's answer (closed),
   * which the page reads and tells; script errors and CSP violations stay.
   */
  pageProblems(): string[]
}

export async function appWithCloud(t: Test, { cloud = true } = {}): Promise<AppWithCloud> {
  const started = await cloudProcess(t)
  const app = await openApp(t, cloud ? { boot: { appCloud: started.url } } : {})
  const broker = new BrokerClient({ url: started.url })
  const client = ownerClient(app.o.https)
  const random = (length: number) => new Uint8Array(randomBytes(length))
  const phone = new Authenticator({
    transport: fetchTransport(),
    store: new MemoryPairingStore<string>(),
    keys: new NobleKeys(keySealer(), random),
    random,
    now: () => Math.floor(Date.now() / 1000),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    label: PHONE_LABEL,
  })
  const proof = async () => {
    const { eid } = await client.pairingIdentity()
    const { epk } = await broker.deviceSession(eid)
    return { ...(await client.extMac(epk)), epk }
  }
  return {
    ...app,
    cloudUrl: started.url,
    broker,
    client,
    phone,
    async pairByApi() {
      const device = await client.pairingIdentity()
      const { epk } = await broker.deviceSession(device.eid)
      const { request, eid } = await client.extInit(epk)
      const { rid, link } = await broker.registerInit({ epk, eid, request })
      await phone.accept(await phone.offer(parsePairingInvite(link)))
      const state = await broker.registerCheck(rid)
      if (state.state !== 'replied') throw new Error(`the registration is ${state.state}`)
      const validated = await client.extValidate(state.pid, state.reply)
      await broker.registerFinalise(rid, validated)
      return { kid: validated.kid, pid: state.pid }
    },
    async nextApproval() {
      let approval: Approval | undefined
      await until('an event at the phone', async () => {
        const [pending] = await phone.pendingEvents()
        approval = pending && (await phone.open(pending))
        return approval !== undefined
      })
      return approval!
    },
    pageProblems: () => app.problems.filter((p) => !/^\d{3} /.test(p) || !p.includes(` ${started.url}/notify/`)),
    async bothSides() {
      const device = (await client.extPairings()).map((p) => p.pid)
      const atBroker = (await broker.subscribersList(await proof())).map((s) => s.pid)
      return { device, broker: atBroker }
    },
  }
}

/** The quiet zone the page draws around its QR code, in modules. */
const QUIET = 4

/**
 * The modules of the QR code the page drew, from its SVG path (each dark module `M x y h1v1h-1z`); its size from the
 * finder pattern's corners, which are always dark.
 */
export function drawnQrModules(d: string): QrModules {
  const dark = new Set<string>()
  let size = 0
  for (const [, x, y] of d.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) {
    const [col, row] = [Number(x) - QUIET, Number(y) - QUIET]
    dark.add(`${row} ${col}`)
    size = Math.max(size, col + 1, row + 1)
  }
  return { size, get: (row, col) => dark.has(`${row} ${col}`) }
}

/** What a QR reader (jsQR, the phone page's fallback) reads off `modules`, drawn 4 px a module in its quiet zone. */
export function readQrModules(modules: QrModules): string | undefined {
  const scale = 4
  const side = (modules.size + 2 * QUIET) * scale
  const pixels = new Uint8ClampedArray(side * side * 4).fill(255)
  for (let y = 0; y < side; y++)
    for (let x = 0; x < side; x++) {
      const [row, col] = [Math.floor(y / scale) - QUIET, Math.floor(x / scale) - QUIET]
      if (row >= 0 && col >= 0 && row < modules.size && col < modules.size && modules.get(row, col))
        pixels.fill(0, (y * side + x) * 4, (y * side + x) * 4 + 3)
    }
  // CommonJS under NodeNext: the module's `default` is the decoder (authapp/qr-scanner.ts).
  return jsqr.default(pixels, side, side)?.data
}
