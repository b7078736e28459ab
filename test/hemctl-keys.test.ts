// hemctl keys, encrypt and decrypt against a real device, in-process with captured io.
import { generateKeyPairSync } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { MASTER_PASS, owned } from './helpers/owner.js'

t.test('keys, encrypt and decrypt', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { variant: 'E', dataDir: join(root, 'device') })
  const insecure = ['--url', o.https, '--insecure']
  const hemctl = hemctlInProcess(insecure, root)
  const kidLine = /^[0-9a-f]{32}\n$/

  await t.test('help and usage errors, before any login', async (t) => {
    const help = await hemctl(['keys', 'create', '--help'])
    t.equal(help.code, 0)
    t.match(
      help.stdout,
      new RegExp(
        /^Usage: hemctl keys create --label L --type T \[--mode M\] /.source +
          /\[--descr-text TEXT \| --descr-b64 B64\] \[CONNECTION OPTIONS\]\n/.source,
      ),
    )
    t.match(help.stdout, /\nConnection options:\n/)
    t.match(
      (await hemctl(['keys', '--help'])).stdout,
      /^Usage: hemctl keys SUBCOMMAND \[OPTIONS\]\n\nCommands:\n {2}create /,
    )
    t.match((await hemctl(['decrypt', '-h'])).stdout, /^Usage: hemctl decrypt \[--in FILE\]/)
    const cases: [string[], RegExp][] = [
      [['keys', 'create', '--type', 'AES256'], /--label is needed/],
      [['keys', 'create', '--label', 'x', '--type', 'AES256', '--descr-text', 'a', '--descr-b64', 'YQ=='], /not both/],
      [
        ['keys', 'create', '--label', 'x', '--type', 'AES256', '--descr-b64', 'not base64!'],
        /--descr-b64 is not base64/,
      ],
      [['keys', 'get', 'nothex'], /'nothex' is not a KID/],
      [['keys', 'get'], /KID is needed/],
      [['keys', 'get', 'a'.repeat(32), 'b'.repeat(32)], /one KID, not 2/],
      [['keys', 'import', '--label', 'x', '--type', 'CURVE25519'], /one of --pubkey-file or --pubkey-b64/],
      [['keys', 'search'], /PATTERN is needed/],
      [['keys', 'nope'], /unknown command 'nope'/],
      [['encrypt', '--kid', 'a'.repeat(32), '--alg', 'AES256-XTS'], /--alg: 'AES256-XTS' is not/],
      [['encrypt', '--alg', 'AES256-GCM'], /--kid is needed/],
      [['decrypt'], /the input is not JSON/],
      [['keys', 'search', 'AQ==', '--text', 'invoice:'], /give a PATTERN or --text, not both/],
      [
        [
          'encrypt',
          '--kid',
          'a'.repeat(32),
          '--alg',
          'AES128-CBC',
          '--peer-kid',
          'b'.repeat(32),
          '--pubkey-b64',
          'AA==',
        ],
        /give --peer-kid or --pubkey-b64, not both/,
      ],
      [
        ['encrypt', '--kid', 'a'.repeat(32), '--alg', 'AES128-CBC', '--pubkey-b64', 'not base64!'],
        /--pubkey-b64 is not/,
      ],
    ]
    for (const [argv, message] of cases) {
      const answer = await hemctl(argv)
      t.equal(answer.code, 2, argv.join(' '))
      t.match(answer.stderr, message, argv.join(' '))
    }
    for (const [envelope, message] of [
      ['[]', /the envelope is not a JSON object/],
      ['{"ciphertext":"AA==","iv":7}', /the envelope's iv is not a string/],
    ] as const) {
      const answer = await hemctl(['decrypt'], { stdin: [Buffer.from(envelope)] })
      t.match(answer, { code: 2, stderr: message }, envelope)
    }
  })

  // Pinned on first use: the only run without --insecure.
  const created = await hemctl(
    ['keys', 'create', '--label', 'invoices', '--type', 'AES256', '--descr-text', 'invoice:2026'],
    { connection: ['--url', o.https] },
  )
  t.equal(created.code, 0, created.stderr)
  t.match(created.stdout, kidLine)
  const aes = created.stdout.trim()
  t.match(
    await readFile(join(root, 'hemctl', 'known-devices.json'), 'utf8'),
    new URL(o.https).host,
    'the certificate is pinned',
  )
  const curve = await hemctl(['keys', 'create', '--label', 'ecdh', '--type', 'CURVE25519', '--json'])
  t.equal(curve.code, 0, curve.stderr)
  const ecdh = (JSON.parse(curve.stdout) as { kid: string }).kid

  const peer = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(-32)
  const pubkeyFile = join(root, 'peer.pub')
  await writeFile(pubkeyFile, peer)
  const imported = await hemctl([
    'keys',
    'import',
    '--label',
    'peer',
    '--type',
    'CURVE25519',
    '--pubkey-file',
    pubkeyFile,
    '--descr-b64',
    Buffer.from('peer').toString('base64'),
  ])
  t.equal(imported.code, 0, imported.stderr)
  const peerKid = imported.stdout.trim()
  const duplicate = await hemctl([
    'keys',
    'import',
    '--label',
    'again',
    '--type',
    'CURVE25519',
    '--pubkey-b64',
    peer.toString('base64'),
  ])
  t.equal(duplicate.code, 1, 'the same public key twice is refused')
  t.match(duplicate.stderr, /^hemctl keys import: POST \/api\/keymgmt\/import: the device answered 406/)

  const updated = await hemctl(['keys', 'update', aes, '--label', 'invoices-2027', '--descr-text', 'invoice:2027'])
  t.equal(updated.code, 0, updated.stderr)
  t.equal(updated.stdout, `updated ${aes}\n`)

  const listed = await hemctl(['keys', 'list'])
  t.equal(listed.code, 0, listed.stderr)
  const lines = listed.stdout.trimEnd().split('\n')
  t.match(lines[0], /^KID {31}TYPE +LABEL +CREATED$/)
  t.equal(lines.length, 4, 'a header and three keys')
  t.match(
    listed.stdout,
    new RegExp(`\\n${aes}  ATT,PKEY,AES256 +invoices-2027 +\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\n`),
  )
  t.match(listed.stdout, new RegExp(`\\n${peerKid}  ECDH,CURVE25519 +peer `))

  const got = await hemctl(['keys', 'get', ecdh])
  t.equal(got.code, 0, got.stderr)
  t.match(got.stdout, new RegExp(`^kid: ${ecdh}\ntype: CURVE25519\npubkey: \\S{44}\n`))

  const byText = await hemctl(['keys', 'search', '--text', 'invoice:', '--json'])
  t.equal(byText.code, 0, byText.stderr)
  t.match(JSON.parse(byText.stdout), [
    { kid: aes, label: 'invoices-2027', descr: Buffer.from('invoice:2027').toString('base64') },
  ])
  t.equal(JSON.parse(byText.stdout).length, 1)
  const bySuffix = await hemctl(['keys', 'search', `${Buffer.from('2027').toString('base64')}$`])
  t.equal(bySuffix.code, 0, bySuffix.stderr)
  t.equal(bySuffix.stdout.trimEnd().split('\n').length, 2, 'a header and one key')
  t.match(bySuffix.stdout, `\n${aes}  `)

  await t.test('encrypt and decrypt through files (GCM, with aad)', async (t) => {
    const dir = t.testdir({ 'plain.bin': Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 13]), 'aad.bin': 'header' })
    const sealed = await hemctl([
      'encrypt',
      '--kid',
      aes,
      '--alg',
      'AES256-GCM',
      '--in',
      join(dir, 'plain.bin'),
      '--aad-file',
      join(dir, 'aad.bin'),
      '--out',
      join(dir, 'sealed.json'),
    ])
    t.equal(sealed.code, 0, sealed.stderr)
    t.equal(sealed.stdout, '')
    const envelope = JSON.parse(await readFile(join(dir, 'sealed.json'), 'utf8'))
    t.match(envelope, {
      alg: 'AES256-GCM',
      kid: aes,
      ciphertext: String,
      iv: String,
      tag: String,
      aad: Buffer.from('header').toString('base64'),
    })
    const opened = await hemctl(['decrypt', '--in', join(dir, 'sealed.json'), '--out', join(dir, 'opened.bin')])
    t.equal(opened.code, 0, opened.stderr)
    t.same(await readFile(join(dir, 'opened.bin')), await readFile(join(dir, 'plain.bin')))

    // The envelope names another key: --kid overrides it.
    const elsewhere = { ...envelope, kid: ecdh }
    const overridden = await hemctl(['decrypt', '--kid', aes, '--json'], {
      stdin: [Buffer.from(JSON.stringify(elsewhere))],
    })
    t.equal(overridden.code, 0, overridden.stderr)
    t.same(JSON.parse(overridden.stdout), { plaintext: (await readFile(join(dir, 'plain.bin'))).toString('base64') })

    const endless = await hemctl(['encrypt', '--kid', aes, '--alg', 'AES256-GCM'], {
      stdin: Array.from({ length: 65 }, () => Buffer.alloc(1024)),
    })
    t.match(endless, { code: 2, stderr: /larger than 65536 bytes/ }, 'stdin is not read without end')

    const tag = Buffer.from(envelope.tag, 'base64')
    tag[0]! ^= 1
    const forged = await hemctl(['decrypt'], {
      stdin: [Buffer.from(JSON.stringify({ ...envelope, tag: tag.toString('base64') }))],
    })
    t.equal(forged.code, 1, 'a tag that does not verify')
    t.match(forged.stderr, /^hemctl decrypt: POST \/api\/crypto\/cipher\/decrypt: the device answered 406/)
    t.equal(forged.stdout, '')
  })

  await t.test('encrypt | decrypt through stdin and stdout (ECDH with a stored peer and a context)', async (t) => {
    const plaintext = Buffer.from('a message\nwith two lines and \u00e9')
    const sealed = await hemctl(
      ['encrypt', '--kid', ecdh, '--alg', 'AES128-CBC', '--peer-kid', peerKid, '--ctx', 'order 7'],
      { stdin: [plaintext.subarray(0, 5), plaintext.subarray(5)] },
    )
    t.equal(sealed.code, 0, sealed.stderr)
    t.match(JSON.parse(sealed.stdout), {
      alg: 'AES128-CBC',
      kid: ecdh,
      ext_kid: peerKid,
      ctx: Buffer.from('order 7').toString('base64'),
      iv: String,
    })
    const opened = await hemctl(['decrypt'], { stdin: [sealed.bytes] })
    t.equal(opened.code, 0, opened.stderr)
    t.same(opened.bytes, plaintext)

    // ECB with the peer's public key given: the envelope carries the key, and no iv.
    const block = Buffer.alloc(16, 7)
    const given = await hemctl(
      ['encrypt', '--kid', ecdh, '--alg', 'AES128-ECB', '--pubkey-b64', peer.toString('base64')],
      {
        stdin: [block],
      },
    )
    t.equal(given.code, 0, given.stderr)
    const envelope = JSON.parse(given.stdout) as Record<string, string>
    t.same(Object.keys(envelope).sort(), ['alg', 'ciphertext', 'kid', 'pubkey'])
    t.equal(envelope.pubkey, peer.toString('base64'))
    const back = await hemctl(['decrypt'], { stdin: [given.bytes] })
    t.equal(back.code, 0, back.stderr)
    t.same(back.bytes, block)
  })

  await t.test('refusals: the master, a wrong passphrase, an unknown key', async (t) => {
    const master = await hemctl(['keys', 'list', '--master'], { env: { HEM_MASTER_PASSPHRASE: MASTER_PASS } })
    t.equal(master.code, 4, 'the master may log in, but not manage keys')
    t.match(master.stderr, /^hemctl keys list: GET \/api\/keymgmt\/list\/0\/15: the device answered 403/)
    const wrong = await hemctl(['keys', 'list'], { env: { HEM_PASSPHRASE: 'not the passphrase' } })
    t.equal(wrong.code, 4)
    t.match(wrong.stderr, /^hemctl keys list: POST \/api\/auth\/token: the device answered 401/)
    t.notMatch(wrong.stderr + wrong.stdout, /not the passphrase/)

    const deleted = await hemctl(['keys', 'delete', peerKid])
    t.equal(deleted.code, 0, deleted.stderr)
    t.equal(deleted.stdout, `deleted ${peerKid}\n`)
    const gone = await hemctl(['keys', 'get', peerKid])
    t.equal(gone.code, 1, 'an unknown kid')
    t.match(gone.stderr, new RegExp(`^hemctl keys get: GET /api/keymgmt/get/${peerKid}: the device answered 404`))
  })

  await t.test('keys create: the new types, with the mode the family SDKs send', async (t) => {
    const cases: [string[], string][] = [
      [['--type', 'SHA3-512', '--mode', 'SHA3-512'], 'ATT,PKEY,SHA3-512'],
      [['--type', 'MLKEM1024'], 'ATT,PKEY,PQC,MLKEM1024'],
      [['--type', 'MLDSA87', '--mode', 'MLDSA87'], 'ATT,PKEY,PQC,MLDSA87'],
      [['--type', 'SECP256K1', '--mode', 'SECP256K1'], 'ATT,PKEY,ECDH,SECP256K1'],
      [['--type', 'ED448', '--mode', 'ExDSA'], 'ATT,PKEY,ExDSA,ED448'],
    ]
    const help = await hemctl(['keys', 'create', '--help'])
    t.match(help.stdout, /MLKEM512, MLKEM768, MLKEM1024 \(ML-KEM\); MLDSA44, MLDSA65, MLDSA87 \(ML-DSA\)/)
    for (const [flags, listed] of cases) {
      const made = await hemctl(['keys', 'create', '--label', 'new type', ...flags])
      t.equal(made.code, 0, made.stderr)
      const kid = made.stdout.trim()
      t.match((await hemctl(['keys', 'list'])).stdout, new RegExp(`\\n${kid}  ${listed} +new type `), flags.join(' '))
    }
  })
})
