import type { KV } from '@nats-io/kv'
import { generateKeyPairSync } from 'node:crypto'
import type { DomainCa } from './domain-ca.js'
import type { CloudState } from './types.js'

/** A predefined name's TLS key pair and certificate, shared by every device on that name (as the vendor's `my`). */
export interface NameMaterial {
  /** b64 PKCS#8 DER of the P-256 private key. */
  key: string
  /** b64 DER of the leaf. */
  crt: string
  /** Unix seconds. */
  not_after: number
}

const LIFETIME = 397 * 86400
/** A certificate this close to its end is replaced at the next request for it. */
const RENEW_BEFORE = 30 * 86400

/** The predefined names' material in a bucket: made once for the whole cluster, renewed before it expires. */
export class PredefinedNames {
  private constructor(
    private readonly kv: KV,
    private readonly ca: DomainCa,
  ) {}

  static async open(state: CloudState, ca: DomainCa): Promise<PredefinedNames> {
    return new PredefinedNames(await state.bucket('domain-names'), ca)
  }

  async material(name: string, now: number): Promise<NameMaterial> {
    const entry = await this.kv.get(name)
    const current = entry?.operation === 'PUT' ? entry.json<NameMaterial>() : undefined
    if (current && current.not_after - RENEW_BEFORE > now) return current
    const fresh = await this.make(name, now)
    try {
      if (entry) await this.kv.update(name, JSON.stringify(fresh), entry.revision)
      else await this.kv.create(name, JSON.stringify(fresh))
      return fresh
    } catch {
      // Another instance made it first: every device on the name must get the same key, so theirs it is.
      const winner = await this.kv.get(name)
      if (winner?.operation !== 'PUT') throw new Error(`the material of ${name} could not be stored`)
      return winner.json<NameMaterial>()
    }
  }

  private async make(name: string, now: number): Promise<NameMaterial> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }))
    const notAfter = now + LIFETIME
    const leaf = await this.ca.issue(spki, [name], new Date((now - 300) * 1000), new Date(notAfter * 1000))
    return {
      key: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
      crt: Buffer.from(leaf).toString('base64'),
      not_after: notAfter,
    }
  }
}
