// The trust anchors (backend key, vendor key, factory CA) are the installation's: the published
// development keys are used only in development mode, which the STARTUP record names.
import { createPrivateKey, createPublicKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { resolveTrust } from '../cli/hemd/trust-flags.js'
import { DEV_VENDOR_PUBLIC_KEY } from '../hal/sim/vendor-key-dev.js'
import {
  developmentAnchors,
  developmentTrust,
  readTrustAnchor,
  trustFingerprint,
  type TrustAnchors,
} from '../hal/trust-anchors.js'
import { buildImage, packDirectory } from '../image/index.js'
import { signCheckinReply } from '../protocol/checkin.js'
import { LogType } from '../protocol/journal.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { operatorKeys, type OperatorKeys, publishedKeyFiles } from './helpers/operator-checkout.js'
import { api } from './helpers/keys.js'
import { login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { imageOf, upload } from './helpers/upload.js'

const devBackend = createPrivateKey(readFileSync(new URL('../deploy/keys/backend-dev.pem', import.meta.url)))
const devDir = new URL('../deploy/keys/', import.meta.url).pathname

async function anchorsOf(keys: OperatorKeys): Promise<TrustAnchors> {
  return (
    await resolveTrust({
      trustFiles: { backendKey: keys.backendKey, vendorKey: keys.vendorKey, factoryRoot: keys.factoryCa },
    })
  ).anchors
}

t.test('the development vendor key the HAL embeds is the one in deploy/keys', async (t) => {
  const raw = createPublicKey(createPrivateKey(readFileSync(join(devDir, 'vendor-dev.pem'))))
    .export({ format: 'der', type: 'spki' })
    .subarray(-32)
  t.equal(raw.toString('base64'), DEV_VENDOR_PUBLIC_KEY)
})

t.test('hemd without --dev-keys needs all three keys and refuses the development ones', async (t) => {
  const keys = await operatorKeys(t.testdir())
  await t.rejects(resolveTrust({}), {
    name: 'UsageError',
    message: /no --backend-key, --vendor-key, --factory-ca given: .*deploy\/install\.sh.*--dev-keys/,
  })
  await t.rejects(resolveTrust({ trustFiles: { backendKey: keys.backendKey } }), {
    name: 'UsageError',
    message: /no --vendor-key, --factory-ca given/,
  })
  const published = await publishedKeyFiles(join(t.testdirName, 'published'))
  const ownFiles = { backendKey: keys.backendKey, vendorKey: keys.vendorKey, factoryRoot: keys.factoryCa }
  await t.rejects(resolveTrust({ trustFiles: { ...ownFiles, backendKey: published.backendKey } }), {
    name: 'TrustAnchorError',
    message: /--backend-key .* holds the published development backend key .*only with --dev-keys/,
  })
  await t.rejects(resolveTrust({ trustFiles: { ...ownFiles, factoryRoot: published.factoryCa } }), {
    message: /--factory-ca .* holds the published development factory CA's key /,
  })
  await t.rejects(resolveTrust({ trustFiles: { ...ownFiles, vendorKey: published.vendorKeyCertificate } }), {
    message: /--vendor-key .* holds the published development vendor key /,
  })
  await t.rejects(
    resolveTrust({ trustFiles: { ...ownFiles, backendKey: join(devDir, 'backend-dev.pem') } }),
    { name: 'TrustAnchorError', message: /is a private key: give its public half/ },
    'a private key has no place on the device',
  )
  await t.rejects(readTrustAnchor('vendorKey', keys.factoryCa), /not an Ed25519 public key/)
  await t.rejects(readTrustAnchor('factoryRoot', keys.vendorKey), /exactly one PEM certificate/)
  await t.rejects(readTrustAnchor('backendKey', join(t.testdirName, 'nothing.pem')), /cannot read it \(ENOENT\)/)

  const own = await resolveTrust({ trustFiles: ownFiles })
  t.same(own.development, [], 'no development key')
  t.notMatch(own.summary, /development/)
  const dev = await resolveTrust({ devKeys: true })
  t.same(dev.anchors, developmentTrust(), '--dev-keys: the development keys')
  t.same(dev.development, ['backendKey', 'vendorKey', 'factoryRoot'])
  t.match(dev.summary, /^backend key [0-9a-f]{16} \(development\), vendor key [0-9a-f]{16} \(development\), factory CA/)
  const mixed = await resolveTrust({ devKeys: true, trustFiles: { backendKey: keys.backendKey } })
  t.same(mixed.development, ['vendorKey', 'factoryRoot'], '--dev-keys fills in only what no file gives')
})

t.test('a certificate re-issued from the development CA key is a development key', async (t) => {
  const keys = await operatorKeys(t.testdir())
  const published = await publishedKeyFiles(join(t.testdirName, 'published'))
  const reissued = await readTrustAnchor('factoryRoot', published.reissuedFactoryCa)
  t.not(trustFingerprint(reissued), trustFingerprint(developmentTrust().factoryRoot), 'other certificate bytes')
  const ownFiles = { backendKey: keys.backendKey, vendorKey: keys.vendorKey, factoryRoot: keys.factoryCa }
  await t.rejects(resolveTrust({ trustFiles: { ...ownFiles, factoryRoot: published.reissuedFactoryCa } }), {
    name: 'TrustAnchorError',
    message: /--factory-ca \S+factory-ca-reissued\.crt\.pem holds the published development factory CA's key/,
  })
  const dev = await resolveTrust({
    devKeys: true,
    trustFiles: { ...ownFiles, factoryRoot: published.reissuedFactoryCa },
  })
  t.same(dev.development, ['factoryRoot'], '--dev-keys: used, and known for what it is')
  t.match(dev.summary, /factory CA [0-9a-f]{16} \(development\)$/)
  t.same(developmentAnchors({ ...developmentTrust(), factoryRoot: reissued }), [
    'backendKey',
    'vendorKey',
    'factoryRoot',
  ])
})

for (const split of [false, true])
  t.test(
    `a check-in signed with the development backend key is refused by a device with its own` +
      (split ? ' (--split)' : ''),
    async (t) => {
      const keys = await operatorKeys(t.testdir())
      const trust = { ...developmentTrust(), backendKey: (await anchorsOf(keys)).backendKey }
      // --split: the auth service's own process gets the installation's key from the supervisor.
      const o = await owned(t, {
        dataDir: join(t.testdirName, 'data'),
        cfg: { trusted_backend: true },
        boot: { trust, split },
      })
      const checkIn = async (key: typeof devBackend) => {
        const check = (await call(`${o.base}/api/system/checkin`)).json.check as string
        return call(`${o.base}/api/system/checkin`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ checked: signCheckinReply(check, key, { action: 'lock' }) }),
        })
      }
      t.match(await checkIn(devBackend), { status: 406, json: { error: 'backend_unverified' } }, 'the published key')
      t.equal((await call(`${o.base}/api/system/status`)).json.fls_state, 0, 'the device is not locked')
      t.match(await checkIn(keys.backend), { status: 200 }, "the installation's backend key")
      t.equal(((await call(`${o.base}/api/system/status`)).json.fls_state as number) & 0x40, 0x40, 'locked by it')
    },
  )

t.test('the STARTUP record says when the device runs with development keys', async (t) => {
  const keys = await operatorKeys(t.testdir())
  const dev = await owned(t, { dataDir: join(t.testdirName, 'dev') })
  const own = await owned(t, { dataDir: join(t.testdirName, 'own'), boot: { trust: await anchorsOf(keys) } })
  await dev.device.stop()
  await own.device.stop()
  const startup = async (dataDir: string) =>
    (await readJournal(dataDir)).records.find((r) => r.type === LogType.STARTUP)!.decoded
  t.match(await startup(dev.device.dataDir), { dev_keys: true }, 'development mode')
  t.notOk('dev_keys' in (await startup(own.device.dataDir))!, "the installation's keys: nothing to say")
})

t.test("an uploaded image is checked against the installation's vendor key, not the running build's", async (t) => {
  const top = t.testdir({ app: { 'index.html': '<!doctype html>\n' } })
  const keys = await operatorKeys(join(top, 'keys'))
  // The build in dist/ is signed with the development vendor key; the installation trusts another.
  const o = await owned(t, {
    variant: 'P',
    dataDir: join(top, 'data'),
    boot: { trust: { ...developmentTrust(), vendorKey: (await anchorsOf(keys)).vendorKey } },
  })
  const token = await login(o.base, 'system:upgrade')
  const check = async (image: Buffer) => {
    t.equal((await upload(o.base, 'ui', image, {}, token)).status, 200, 'uploaded')
    let answer = await api(`${o.base}/api/system/upgrade/check_ui`, token)
    await until(
      'the check ends',
      async () => ![201, 202].includes((answer = await api(`${o.base}/api/system/upgrade/check_ui`, token)).status),
    )
    return answer
  }
  const app = join(top, 'app')
  t.match(await check(await imageOf(app, 'ui', '1.0.0-dev', ['P'])), { status: 406 }, 'signed with the development key')
  const own = buildImage(
    { kind: 'ui', hardware: ['P'], floor: 0, version: '1.0.0-own' },
    await packDirectory(app),
    keys.vendor.export({ type: 'pkcs8', format: 'pem' }).toString(),
  )
  t.match(await check(own), { status: 200 }, "signed with the installation's vendor key")
})
