import type { TrustAnchorName, TrustAnchors } from '../../hal/index.js'
import { UsageError } from './endpoint.js'

export type TrustFiles = Partial<Record<TrustAnchorName, string>>

/** The anchors a device runs with, which of them are the development ones, and how the banner names them. */
export interface ResolvedTrust {
  anchors: TrustAnchors
  development: TrustAnchorName[]
  summary: string
}

const LABELS: Record<TrustAnchorName, string> = {
  backendKey: 'backend key',
  vendorKey: 'vendor key',
  factoryRoot: 'factory CA',
}

/** The key an anchor holds, in words. */
const KEY_LABELS: Record<TrustAnchorName, string> = { ...LABELS, factoryRoot: "factory CA's key" }

/**
 * The installation's anchors from the operator's files. A development key is used only in
 * development mode (--dev-keys), for an anchor no file gives; a production device (without it)
 * needs all three files and refuses the published keys: it never falls back to them.
 */
export async function resolveTrust(args: { trustFiles?: TrustFiles; devKeys?: true }): Promise<ResolvedTrust> {
  // Not the HAL's face: the launcher resolves these too, and the HAL's crypto engines cost it about 0.2 s to load.
  const {
    developmentAnchors,
    developmentKeyOf,
    developmentTrust,
    readTrustAnchor,
    TRUST_ANCHOR_FLAGS,
    TrustAnchorError,
    trustFingerprint,
  } = await import('../../hal/trust-anchors.js')
  const names = Object.keys(TRUST_ANCHOR_FLAGS) as TrustAnchorName[]
  const files = args.trustFiles ?? {}
  const missing = names.filter((name) => files[name] === undefined)
  if (!args.devKeys && missing.length > 0)
    throw new UsageError(
      `no ${missing.map((name) => TRUST_ANCHOR_FLAGS[name]).join(', ')} given: a device needs the ` +
        "installation's keys (deploy/install.sh configures them), or --dev-keys for development",
    )
  const dev = developmentTrust()
  const anchors = { ...dev }
  for (const name of names) {
    const file = files[name]
    if (file === undefined) continue
    anchors[name] = await readTrustAnchor(name, file)
    // By its public key: a certificate re-issued from a published key is as forgeable as the published one.
    const published = developmentKeyOf(name, anchors[name])
    if (!args.devKeys && published)
      throw new TrustAnchorError(
        `${TRUST_ANCHOR_FLAGS[name]} ${file} holds the published development ${KEY_LABELS[published]} ` +
          '(deploy/keys/): anyone can sign with it; use it only with --dev-keys',
      )
  }
  const development = developmentAnchors(anchors)
  const summary = names
    .map((name) => {
      const mark = development.includes(name) ? ' (development)' : ''
      return `${LABELS[name]} ${trustFingerprint(anchors[name]).slice(0, 16)}${mark}`
    })
    .join(', ')
  return { anchors, development, summary }
}
