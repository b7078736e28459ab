// hemctl sign, verify, hmac, ecdh, wrap, unwrap, kem and keys derive against a real device,
// in-process with captured io: files and stdin in, files and stdout out, raw or base64, and a
// verify that fails exits 1.
import { generateKeyPairSync } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ml_kem512 } from '@noble/post-quantum/ml-kem.js'
import t from 'tap'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { owned } from './helpers/owner.js'

t.test('crypto commands', async (t) => {
  const root = t.testdir({ 'msg.bin': Buffer.from([0, 1, 2, 0xff, 10, 13, 0x80]) })
  const o = await owned(t, { variant: 'E', dataDir: join(root, 'device') })
  const connection = ['--url', o.https, '--insecure']
  const run = hemctlInProcess(connection, root)
  const hemctl = (argv: string[], stdin: Uint8Array[] = []) => run(argv, { stdin })
  const created = async (type: string, ...more: string[]) => {
    const answer = await hemctl(['keys', 'create', '--label', type.toLowerCase(), '--type', type, ...more])
    t.equal(answer.code, 0, answer.stderr)
    return answer.stdout.trim()
  }
  const file = (name: string) => join(root, name)
  const message = await readFile(file('msg.bin'))

  await t.test('help, and usage errors before any login', async (t) => {
    for (const command of [['sign'], ['verify'], ['hmac'], ['ecdh'], ['wrap'], ['unwrap'], ['kem', 'encaps']])
      t.match((await hemctl([...command, '--help'])).stdout, new RegExp(`^Usage: hemctl ${command.join(' ')} `))
    t.match((await hemctl(['keys', 'derive', '--help'])).stdout, /^Usage: hemctl keys derive --kid KID /)
    t.match((await hemctl(['kem', '--help'])).stdout, /\n {2}encaps +a fresh shared secret/)
    t.match((await hemctl(['--help'])).stdout, /\n {2}sign +sign a file or stdin/)
    const kid = 'a'.repeat(32)
    const cases: [string[], RegExp][] = [
      [['sign'], /--kid is needed/],
      [['sign', '--kid', kid, '--alg', 'RSA'], /--alg: 'RSA' is not one of SHA256WithECDSA/],
      [['sign', '--kid', kid, '--ctx', 'a', '--ctx-b64', 'YQ=='], /give --ctx or --ctx-b64, not both/],
      [['verify', '--kid', kid], /--sig or --sig-b64 is needed/],
      [['verify', '--kid', kid, '--sig-b64', '***'], /--sig-b64 is not base64/],
      [['hmac', '--kid', kid, '--peer-kid', kid, '--pubkey-b64', 'AA=='], /give --peer-kid or --pubkey-b64, not both/],
      [['hmac', '--kid', kid, '--alg', 'MD5'], /--alg: 'MD5' is not one of SHA2-256/],
      [['ecdh', '--kid', kid], /the peer is needed/],
      [['ecdh', '--kid', kid, '--in', 'x'], /Unknown option '--in'/],
      [['wrap', '--kid', kid, '--iv', 'a6a6'], /--iv must be 16 hex digits/],
      [['wrap', '--kid', kid, '--alg', 'AES512'], /--alg: 'AES512' is not AES128, AES192 or AES256/],
      [['kem', 'encaps', '--kid', kid], /--secret-out is needed/],
      [['keys', 'derive', '--kid', kid, '--label', 'x', '--type', 'AES256'], /the peer is needed/],
    ]
    for (const [argv, expected] of cases) {
      const answer = await hemctl(argv)
      t.equal(answer.code, 2, argv.join(' '))
      t.match(answer.stderr, expected, argv.join(' '))
    }
    const tooLong = await hemctl(['hmac', '--kid', kid], [Buffer.alloc(2049)])
    t.match(
      tooLong,
      { code: 2, stderr: /^hemctl hmac: msg must be 1 to 2048 bytes, not 2049\n$/ },
      'the library checks',
    )
  })

  await t.test('sign | verify: the key type picks the algorithm; a bad signature exits 1', async (t) => {
    const ed = await created('ED25519')
    const signed = await hemctl(['sign', '--kid', ed, '--in', file('msg.bin'), '--out', file('ed.sig')])
    t.equal(signed.code, 0, signed.stderr)
    t.equal(signed.stdout, '')
    t.equal((await readFile(file('ed.sig'))).length, 64, 'raw Ed25519')
    const good = await hemctl(['verify', '--kid', ed, '--sig', file('ed.sig')], [message])
    t.match(good, { code: 0, stdout: 'valid\n' })
    const other = await hemctl(['verify', '--kid', ed, '--sig', file('ed.sig')], [Buffer.from('another message')])
    t.equal(other.code, 1, 'a signature of another message')
    t.equal(other.stderr, 'hemctl verify: the signature does not verify\n')
    t.equal(other.stdout, '', 'nothing on stdout')

    const ec = await created('SECP384R1', '--mode', 'ExDSA')
    const b64 = await hemctl(['sign', '--kid', ec, '--base64', '--alg', 'SHA512WithECDSA'], [message])
    t.equal(b64.code, 0, b64.stderr)
    t.match(b64.stdout, /^M[A-Za-z0-9+/]+=*\n$/, 'one line of base64 of a DER SEQUENCE')
    const asJson = await hemctl(
      ['verify', '--kid', ec, '--alg', 'SHA512WithECDSA', '--sig-b64', b64.stdout.trim(), '--json'],
      [message],
    )
    t.same(JSON.parse(asJson.stdout), { valid: true })
    await writeFile(file('ec.sig.b64'), b64.stdout)
    const wrongAlg = await hemctl(
      ['verify', '--kid', ec, '--sig', file('ec.sig.b64'), '--base64', '--in', file('msg.bin'), '--json'],
      [],
    )
    t.equal(wrongAlg.code, 1, 'the default for P-384 is SHA384WithECDSA: another hash')
    t.same(JSON.parse(wrongAlg.stdout), { valid: false })

    const dsa = await created('MLDSA65')
    const pq = await hemctl(['sign', '--kid', dsa, '--ctx', 'orders', '--json'], [message])
    t.equal(pq.code, 0, pq.stderr)
    const { alg, signature } = JSON.parse(pq.stdout) as { alg: string; signature: string }
    t.equal(alg, 'MLDSA65')
    t.equal(Buffer.from(signature, 'base64').length, 3309)
    t.match(await hemctl(['verify', '--kid', dsa, '--ctx', 'orders', '--sig-b64', signature], [message]), {
      code: 0,
      stdout: 'valid\n',
    })
    const noCtx = await hemctl(['verify', '--kid', dsa, '--alg', 'MLDSA', '--sig-b64', signature], [message])
    t.match(noCtx, { code: 1, stderr: /the signature does not verify/ }, 'ML-DSA with another context')

    const aes = await created('AES128')
    const cannot = await hemctl(['sign', '--kid', aes], [message])
    t.match(cannot, { code: 1, stderr: new RegExp(`^hemctl sign: ${aes} is a AES128 key, which does not sign`) })
  })

  await t.test('hmac, then hmac --mac: a MAC that does not match exits 1', async (t) => {
    const key = await created('SHA2-384')
    const made = await hemctl(['hmac', '--kid', key, '--out', file('msg.mac')], [message])
    t.equal(made.code, 0, made.stderr)
    t.equal((await readFile(file('msg.mac'))).length, 48)
    t.match(await hemctl(['hmac', '--kid', key, '--mac', file('msg.mac'), '--in', file('msg.bin')]), {
      code: 0,
      stdout: 'valid\n',
    })
    const bad = await hemctl(['hmac', '--kid', key, '--mac', file('msg.mac')], [Buffer.from('tampered')])
    t.match(bad, { code: 1, stderr: 'hemctl hmac: the MAC does not match\n' })
  })

  await t.test('ecdh with a peer, and keys derive from it', async (t) => {
    const mine = await created('CURVE25519')
    const peer = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(-32)
    await writeFile(file('peer.pub'), peer)
    const secret = await hemctl(['ecdh', '--kid', mine, '--pubkey-file', file('peer.pub'), '--base64'])
    t.equal(secret.code, 0, secret.stderr)
    t.equal(Buffer.from(secret.stdout.trim(), 'base64').length, 32)
    const hashed = await hemctl(['ecdh', '--kid', mine, '--pubkey-b64', peer.toString('base64'), '--alg', 'SHA2-512'])
    t.equal(hashed.bytes.length, 64, 'raw bytes of the SHA-512 of the secret')

    const derive = (label: string, type: string) =>
      hemctl(['keys', 'derive', '--kid', mine, '--pubkey-file', file('peer.pub'), '--label', label, '--type', type])
    const derived = await derive('d', 'SHA3-256')
    t.equal(derived.code, 0, derived.stderr)
    t.match(derived.stdout, /^[0-9a-f]{32}\n$/)
    const listed = await hemctl(['keys', 'list'])
    t.match(listed.stdout, new RegExp(`\\n${derived.stdout.trim()}  ATT,PKEY,SHA3-256 +d `))
    const again = await derive('e', 'ED25519')
    t.equal(again.code, 0, again.stderr)
    const clash = await derive('f', 'ED25519')
    t.match(clash, { code: 1, stderr: /^hemctl keys derive: POST \/api\/keymgmt\/derive: the device answered 406/ })
  })

  await t.test('wrap | unwrap through stdin and stdout, raw and base64', async (t) => {
    const kek = await created('AES256')
    const key = Buffer.alloc(24, 0x5a)
    const wrapped = await hemctl(['wrap', '--kid', kek, '--alg', 'AES192', '--iv', '0011223344556677'], [key])
    t.equal(wrapped.code, 0, wrapped.stderr)
    t.equal(wrapped.bytes.length, 32)
    const unwrapped = await hemctl(
      ['unwrap', '--kid', kek, '--alg', 'AES192', '--iv', '0011223344556677'],
      [wrapped.bytes],
    )
    t.same(unwrapped.bytes, key)
    const asText = await hemctl(['wrap', '--kid', kek, '--base64'], [key])
    t.match(asText.stdout, /^[A-Za-z0-9+/]{43}=\n$/, '32 bytes as one line of base64')
    const back = await hemctl(['unwrap', '--kid', kek, '--base64'], [Buffer.from(asText.stdout)])
    t.equal(back.stdout, `${key.toString('base64')}\n`)
    const wrongIv = await hemctl(['unwrap', '--kid', kek, '--alg', 'AES192'], [wrapped.bytes])
    t.match(wrongIv, { code: 1, stderr: /cipher\/unwrap: the device answered 406/ }, 'the integrity check fails')
  })

  await t.test('kem encaps | kem decaps: the same shared secret', async (t) => {
    const kem = await created('MLKEM512')
    const encaps = await hemctl(['kem', 'encaps', '--kid', kem, '--out', file('kem.ct'), '--secret-out', file('a.ss')])
    t.equal(encaps.code, 0, encaps.stderr)
    t.equal((await readFile(file('kem.ct'))).length, 768)
    const decaps = await hemctl(['kem', 'decaps', '--kid', kem, '--in', file('kem.ct')])
    t.equal(decaps.code, 0, decaps.stderr)
    t.same(decaps.bytes, await readFile(file('a.ss')))
    t.equal(decaps.bytes.length, 32)

    const json = await hemctl(['kem', 'encaps', '--kid', kem, '--json'])
    const fields = JSON.parse(json.stdout) as { alg: string; ciphertext: string; shared_secret: string }
    t.equal(fields.alg, 'MLKEM512')
    const viaText = await hemctl(['kem', 'decaps', '--kid', kem, '--base64'], [Buffer.from(`${fields.ciphertext}\n`)])
    t.equal(viaText.stdout, `${fields.shared_secret}\n`)

    // A public key made on the host: imported, encapsulated to by the device, decapsulated here.
    const host = ml_kem512.keygen()
    await writeFile(file('host.kem.pub'), host.publicKey)
    const imported = await hemctl([
      'keys',
      'import',
      '--label',
      'host kem',
      '--type',
      'MLKEM512',
      '--pubkey-file',
      file('host.kem.pub'),
    ])
    t.equal(imported.code, 0, imported.stderr)
    const toHost = await hemctl(['kem', 'encaps', '--kid', imported.stdout.trim(), '--json'])
    const sent = JSON.parse(toHost.stdout) as { ciphertext: string; shared_secret: string }
    t.same(
      Buffer.from(ml_kem512.decapsulate(Buffer.from(sent.ciphertext, 'base64'), host.secretKey)),
      Buffer.from(sent.shared_secret, 'base64'),
      'the host decapsulates what the device encapsulated',
    )
    const noPrivate = await hemctl(
      ['kem', 'decaps', '--kid', imported.stdout.trim()],
      [Buffer.from(sent.ciphertext, 'base64')],
    )
    t.match(noPrivate, { code: 1, stderr: /mlkem\/decaps: the device answered 406/ }, 'a public key cannot decapsulate')
  })
})
