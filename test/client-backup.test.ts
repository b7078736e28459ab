// The client's backup pieces that need no device: the file name a device may suggest, the backup passphrase's
// rule, the refusals' classes by their code, hemctl's progress lines off a terminal, and the page's TLS key wrap
// with WebCrypto's AES (which the device opens as it opens noble's).
import { createDecipheriv } from 'node:crypto'
import { x25519 } from '@noble/curves/ed25519.js'
import { sha256 } from '@noble/hashes/sha2.js'
import t from 'tap'
import type { HemctlIo } from '../cli/hemctl/context.js'
import { progress } from '../cli/hemctl/progress.js'
import {
  AlreadyPersonalisedError,
  BadBackupError,
  backupFilename,
  backupPassphraseProblem,
  ConflictError,
  NotAcceptableError,
  NothingStagedError,
  UnsupportedBackupError,
  WeakPassphraseError,
} from '../client/index.js'
import { codedRefusal } from '../client/coded-errors.js'
import { wrapTlsKeyBytesWebCrypto } from '../protocol/index.js'

t.test('the file name a device suggests is taken only when it is a plain name', async (t) => {
  const named = (name: string) => backupFilename(`attachment; filename="${name}"`)
  t.equal(named('hem-0011223344556677-1764400000.hembackup'), 'hem-0011223344556677-1764400000.hembackup')
  for (const hostile of ['../../.bashrc', '/etc/passwd', 'a/b.hembackup', '.hidden', 'a..b', 'x'.repeat(129), ''])
    t.equal(named(hostile), 'hem.hembackup', JSON.stringify(hostile.slice(0, 20)))
  t.equal(backupFilename(undefined), 'hem.hembackup', 'no header')
  t.equal(backupFilename('inline'), 'hem.hembackup', 'no file name')
})

t.test("the backup passphrase's rule, in UTF-8 bytes after NFC as the device counts", async (t) => {
  t.match(backupPassphraseProblem('eleven byte'), /at least 12 bytes \(this one has 11\)/)
  t.equal(backupPassphraseProblem('twelve bytes'), undefined)
  // Six é as e + combining acute: 18 bytes as typed, 12 after NFC.
  t.equal(backupPassphraseProblem('e\u0301'.repeat(6)), undefined, 'NFC: 6 é are 12 bytes')
  t.match(backupPassphraseProblem('é'.repeat(5)), /this one has 10/)
  t.match(backupPassphraseProblem('x'.repeat(1025)), /at most 1024 bytes/)
})

t.test('a refusal of the backup routes is a class of its own, under its status', async (t) => {
  const refused = (status: number, error: string) => codedRefusal(status, { error, message: 'm' }, 'POST /x')
  for (const [status, code, kind, under] of [
    [406, 'bad_backup', BadBackupError, NotAcceptableError],
    [406, 'unsupported_backup', UnsupportedBackupError, NotAcceptableError],
    [409, 'already_personalised', AlreadyPersonalisedError, ConflictError],
    [409, 'nothing_staged', NothingStagedError, ConflictError],
  ] as const) {
    const error = refused(status, code)
    t.ok(error instanceof kind && error instanceof under, `${status} ${code}: ${error.name}`)
  }
  t.ok(refused(400, 'weak_passphrase') instanceof WeakPassphraseError)
  const init = refused(406, 'already_personalised')
  t.ok(init instanceof NotAcceptableError && !(init instanceof AlreadyPersonalisedError), "init's 406 stays a 406")
  t.equal(refused(406, 'constructor').name, 'NotAcceptableError', 'a code is looked up as data only')
})

t.test('progress lines off a terminal: a line per tenth, or per MiB without a length', async (t) => {
  let written = ''
  const io = { stderr: { write: (text: string) => (written += text) }, stderrIsTTY: false } as unknown as HemctlIo
  const quiet = progress(io, 'backup')
  quiet.bytes(10, 100)
  t.equal(written, '', 'nothing unless asked for')
  const line = progress(io, 'backup', { lines: true })
  for (let done = 0; done <= 100_000; done += 7_000) line.bytes(done, 100_000)
  line.bytes(100_000, 100_000)
  t.equal(written.split('\n').length - 1, 11, 'eleven lines: 0% to 100%')
  t.match(written, /^backup 0% of 97\.7 KiB\nbackup 10% of 97\.7 KiB\n/)
  written = ''
  const streamed = progress(io, 'backup', { lines: true })
  for (let done = 0; done <= 3 * 1024 * 1024; done += 64 * 1024) streamed.bytes(done, undefined)
  t.equal(written, 'backup 0 MiB so far\nbackup 1 MiB so far\nbackup 2 MiB so far\nbackup 3 MiB so far\n')
})

t.test("the page's TLS key wrap with WebCrypto opens as the device opens it", async (t) => {
  const identity = x25519.utils.randomSecretKey()
  const key = new TextEncoder().encode('a PKCS#8 key, or bytes standing for one')
  const { emp, iv, ciphertext } = await wrapTlsKeyBytesWebCrypto(key, x25519.getPublicKey(identity))
  const transport = sha256(x25519.getSharedSecret(identity, emp))
  const decipher = createDecipheriv('aes-256-cbc', transport, iv)
  t.same(Buffer.concat([decipher.update(ciphertext), decipher.final()]), Buffer.from(key))
})
