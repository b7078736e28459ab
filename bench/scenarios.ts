import { encryptRequestBody } from './encrypt-request.js'
import { PRIMITIVE_LOADS, type PrimitiveGroup, type PrimitiveId } from './primitive-loads.js'
import { postImage } from './upload-image.js'
import type { Scenario } from './types.js'

const ENCRYPT = '/api/crypto/cipher/encrypt'
const DECRYPT = '/api/crypto/cipher/decrypt'
const STATUS = '/api/system/status'
const UPLOAD = '/api/system/upgrade/upload_ui'
/** The app's script, as a browser fetches it (the installed factory app's). */
const APP_JS = '/app.js'

/** The groups of scenarios `--only` picks from, in the order a round runs them. */
export const GROUPS = [
  'encrypt',
  'decrypt',
  'ecdh',
  'sign',
  'hmac',
  'pqc',
  'status',
  'metrics',
  'static',
  'scaling',
  'login',
  'download',
  'upload',
  'boot',
  'timings',
  'approvals',
] as const
export type Group = (typeof GROUPS)[number]
/** The groups that are not loads of hemd: they run on servers of their own, before the loads. */
export type LoadGroup = Exclude<Group, 'boot' | 'timings' | 'approvals'>

export function isLoadGroup(group: Group): group is LoadGroup {
  return group !== 'boot' && group !== 'timings' && group !== 'approvals'
}

/** Transfers run on few connections: 32 parallel 8 MiB downloads would measure the socket buffers. */
const TRANSFER_CONNECTIONS = 4
/** The connection counts of the scaling group's encrypt loads (issue 25 item 4), whatever --connections says. */
export const SCALING_CONNECTIONS = [1, 8, 32, 128, 512] as const

/** Everything the load scenarios need from the servers under test (see run-bench.ts). */
export interface ScenarioInputs {
  /** Base URLs of the baselines that run (per group) and of hemd. */
  urls: {
    crypto?: string
    primitives?: string
    bus?: string
    get?: string
    download?: string
    upload?: string
    hemdHttps: string
  }
  /** The AES-256 key of encrypt and direct decrypt, and a token for it. */
  aes: { kid: string; token: string }
  /** The scaling group's hemd (on the watched bus, bus-hemd.ts): its HTTPS URL, AES-256 key and token. */
  scaling?: { url: string; kid: string; token: string }
  /** The metrics group's hemd without instruments (HEMD_UNMETERED): its HTTPS URL, AES-256 key and token. */
  unmetered?: { url: string; kid: string; token: string }
  /** A CURVE25519 key for the indirect decrypt, and a token for it. */
  ecdh: { kid: string; token: string }
  /** Decrypt bodies, each sealed with its server's own key (hemd's, or the bench's for the bare ceiling). */
  decryptBodies: { hemd: string; bare: string }
  ecdhBodies: { hemd: string; bare: string }
  /** The key of each single-primitive load whose group runs, and a token for it. */
  primitives: Partial<Record<PrimitiveId, { kid: string; token: string }>>
  /** One whole login (challenge, key, eJWT, token); throws unless it succeeded. */
  login(): Promise<void>
  /** The journal file downloaded, and a `logger:get` token. */
  logFile: { id: string; bytes: number; token: string }
  /** The 16 MiB signed image, and a `system:upgrade` token. */
  upload: { image: Buffer; token: string }
  /** The ETag hemd gives /app.js in br (what a browser's If-None-Match sends back). */
  appTag: string
}

const json = (token: string): Record<string, string> => ({
  'Content-Type': 'application/json',
  Authorization: `Bearer ${token}`,
})
/** A POST of JSON with a bearer token, on `connections` connections if given. */
const post = (url: string, token: string, body: string, connections?: number) => ({
  kind: 'http' as const,
  url,
  method: 'POST' as const,
  headers: json(token),
  body,
  ...(connections ? { connections } : {}),
})

/** The bare and hemd loads of each single primitive of a group. */
const primitives = (group: PrimitiveGroup, inputs: ScenarioInputs): Scenario[] =>
  PRIMITIVE_LOADS.filter((p) => p.group === group).flatMap((p) => {
    const { kid, token } = inputs.primitives[p.id]!
    const body = p.body(kid)
    return [
      {
        id: `${p.id}-bare`,
        title: `bare: uWS + the device's engine, ${p.what} (HTTPS)`,
        load: post(inputs.urls.primitives! + p.path, token, body),
      },
      {
        id: `${p.id}-hemd`,
        hemd: true,
        title: `hemd POST ${p.path}, ${p.what} (HTTPS, journaled)`,
        load: post(inputs.urls.hemdHttps + p.path, token, body),
      },
    ]
  })

/** Each group's loads, made from the inputs. */
const SCENARIOS: Record<LoadGroup, (inputs: ScenarioInputs) => Scenario[]> = {
  encrypt: (inputs) => {
    const body = encryptRequestBody(inputs.aes.kid)
    return [
      {
        id: 'a',
        title: 'bare ceiling: uWS + node:crypto AES-256-GCM encrypt (HTTPS)',
        load: post(inputs.urls.crypto! + ENCRYPT, inputs.aes.token, body),
      },
      {
        id: 'b',
        title: 'bus ceiling: uWS -> NATS request -> echo (HTTPS)',
        load: post(inputs.urls.bus! + ENCRYPT, inputs.aes.token, body),
      },
      {
        id: 'c',
        hemd: true,
        title: 'hemd POST /api/crypto/cipher/encrypt (HTTPS, journaled)',
        load: post(inputs.urls.hemdHttps + ENCRYPT, inputs.aes.token, body),
      },
    ]
  },
  decrypt: (inputs) => [
    {
      id: 'dec-bare',
      title: 'bare: uWS + node:crypto AES-256-GCM decrypt (HTTPS)',
      load: post(inputs.urls.crypto! + DECRYPT, inputs.aes.token, inputs.decryptBodies.bare),
    },
    {
      id: 'dec-hemd',
      hemd: true,
      title: 'hemd POST /api/crypto/cipher/decrypt, AES256-GCM (HTTPS, journaled)',
      load: post(inputs.urls.hemdHttps + DECRYPT, inputs.aes.token, inputs.decryptBodies.hemd),
    },
  ],
  ecdh: (inputs) => [
    {
      id: 'ecdh-bare',
      title: 'bare: uWS + node:crypto X25519 + HKDF + AES-256-GCM decrypt (HTTPS)',
      load: post(inputs.urls.crypto! + DECRYPT, inputs.ecdh.token, inputs.ecdhBodies.bare),
    },
    {
      id: 'ecdh-hemd',
      hemd: true,
      title: 'hemd decrypt, CURVE25519 key with `pubkey` (HTTPS, journaled)',
      load: post(inputs.urls.hemdHttps + DECRYPT, inputs.ecdh.token, inputs.ecdhBodies.hemd),
    },
  ],
  sign: (inputs) => primitives('sign', inputs),
  hmac: (inputs) => primitives('hmac', inputs),
  pqc: (inputs) => primitives('pqc', inputs),
  status: (inputs) => {
    const get = { kind: 'http' as const, method: 'GET' as const, headers: {} }
    return [
      {
        id: 'd-bare',
        title: 'bare uWS GET of a JSON made per request (HTTPS)',
        load: { ...get, url: inputs.urls.get! + STATUS },
      },
      {
        id: 'd-hemd',
        hemd: true,
        title: 'hemd GET /api/system/status (HTTPS)',
        load: { ...get, url: inputs.urls.hemdHttps + STATUS },
      },
    ]
  },
  // What the instruments cost (docs/metrics.md): encrypt and status on hemd, and on a copy without them.
  metrics: (inputs) => {
    const get = { kind: 'http' as const, method: 'GET' as const, headers: {} }
    const { url, kid, token } = inputs.unmetered!
    return [
      {
        id: 'enc-unmetered',
        hemd: true,
        unmetered: true,
        title: 'hemd encrypt without instruments (HTTPS, journaled)',
        load: post(url + ENCRYPT, token, encryptRequestBody(kid)),
      },
      {
        id: 'enc-metered',
        hemd: true,
        title: 'hemd encrypt with its metrics (HTTPS, journaled)',
        load: post(inputs.urls.hemdHttps + ENCRYPT, inputs.aes.token, encryptRequestBody(inputs.aes.kid)),
      },
      {
        id: 'st-unmetered',
        hemd: true,
        unmetered: true,
        title: 'hemd status without instruments (HTTPS)',
        load: { ...get, url: url + STATUS },
      },
      {
        id: 'st-metered',
        hemd: true,
        title: 'hemd status with its metrics (HTTPS)',
        load: { ...get, url: inputs.urls.hemdHttps + STATUS },
      },
    ]
  },
  static: (inputs) => {
    const get = (headers: Record<string, string>) => ({
      kind: 'http' as const,
      method: 'GET' as const,
      url: inputs.urls.hemdHttps + APP_JS,
      headers,
    })
    const br = { 'Accept-Encoding': 'br' }
    return [
      {
        id: 'app-plain',
        hemd: true,
        title: `hemd GET ${APP_JS}, uncompressed (HTTPS)`,
        load: get({}),
      },
      { id: 'app-br', hemd: true, title: `hemd GET ${APP_JS}, br (HTTPS)`, load: get(br) },
      {
        id: 'app-304',
        hemd: true,
        title: `hemd GET ${APP_JS}, br, If-None-Match: 304 (HTTPS)`,
        load: { ...get({ ...br, 'If-None-Match': inputs.appTag }), status: 304 },
      },
    ]
  },
  scaling: (inputs) => {
    const { url, kid, token } = inputs.scaling!
    const body = encryptRequestBody(kid)
    return SCALING_CONNECTIONS.map((connections) => ({
      id: `scale-${connections}`,
      hemd: true,
      busCounted: true,
      title: `hemd --bus POST ${ENCRYPT}, as c, ${connections} connection(s)`,
      load: post(url + ENCRYPT, token, body, connections),
    }))
  },
  login: (inputs) => [
    {
      id: 'login',
      hemd: true,
      title: 'hemd login: GET + POST /api/auth/token, one at a time (HTTPS)',
      load: { kind: 'serial', run: inputs.login },
    },
  ],
  download: (inputs) => {
    const { id, bytes, token } = inputs.logFile
    const get = {
      kind: 'http' as const,
      method: 'GET' as const,
      headers: { Authorization: `Bearer ${token}` },
      connections: TRANSFER_CONNECTIONS,
    }
    return [
      {
        id: 'log-bare',
        title: `bare uWS: a ${mib(bytes)} file in 128 KiB chunks (HTTPS)`,
        load: { ...get, url: `${inputs.urls.download!}/api/logger/${id}` },
        payloadBytes: bytes,
      },
      {
        id: 'log-hemd',
        hemd: true,
        title: `hemd GET /api/logger/${id} (${mib(bytes)}, HTTPS)`,
        load: { ...get, url: `${inputs.urls.hemdHttps}/api/logger/${id}` },
        payloadBytes: bytes,
      },
    ]
  },
  upload: (inputs) => {
    const { image, token } = inputs.upload
    return [
      {
        id: 'up-bare',
        title: `bare uWS: ${mib(image.length)} body to a file, fsync (HTTPS, one at a time)`,
        load: { kind: 'serial', run: () => postImage(inputs.urls.upload! + UPLOAD, image) },
        payloadBytes: image.length,
      },
      {
        id: 'up-hemd',
        hemd: true,
        title: `hemd POST ${UPLOAD} (${mib(image.length)}, HTTPS, one at a time)`,
        load: { kind: 'serial', run: () => postImage(inputs.urls.hemdHttps + UPLOAD, image, token) },
        payloadBytes: image.length,
      },
    ]
  },
}

/**
 * Each group's loads: the baselines first, then hemd. The cipher loads of a group send requests
 * of the same shape and size to each server (the baselines ignore the token), so that they differ
 * only in what serves them.
 */
export function benchScenarios(groups: readonly LoadGroup[], inputs: ScenarioInputs): Scenario[] {
  return groups.flatMap((group) => SCENARIOS[group](inputs))
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
}
