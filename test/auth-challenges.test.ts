import t from 'tap'
import { ChallengeBook, timedNonce } from '../actors/auth/challenges.js'

const NOW = 1_700_000_000

// Draw k is k (32-bit LE) and then the bytes 4, 5, 6...: every challenge differs, predictably.
function countingRandom() {
  let draws = 0
  return (n: number) => {
    const out = Uint8Array.from({ length: n }, (_, i) => i & 0xff)
    new DataView(out.buffer).setUint32(0, draws++, true)
    return out
  }
}

const bytes = (jti: string) => Buffer.from(jti, 'base64')

t.test('a challenge is 4 bytes of time (LE) and 28 random, standard base64, live 60 s', async (t) => {
  const book = new ChallengeBook({ random: countingRandom() })
  const { jti, exp } = book.issue(NOW)
  t.match(jti, /^[A-Za-z0-9+/]{43}=$/)
  t.equal(bytes(jti).length, 32)
  t.equal(bytes(jti).readUInt32LE(0), NOW)
  t.same(bytes(jti).subarray(4), countingRandom()(28), 'the first draw')
  t.equal(exp, NOW + 60)
  t.equal(book.issue(NOW + 0.9).exp, NOW + 60, 'whole seconds')
})

t.test('single use', async (t) => {
  const book = new ChallengeBook({ random: countingRandom() })
  const { jti } = book.issue(NOW)
  t.ok(book.consume(jti, NOW + 1))
  t.notOk(book.consume(jti, NOW + 1), 'not twice')
  const second = book.issue(NOW)
  const urlSafe = bytes(second.jti).toString('base64url')
  t.ok(book.consume(urlSafe, NOW), 'any base64 spelling of the bytes')
  t.notOk(book.consume(second.jti, NOW))
  t.equal(book.size, 0)
})

t.test('expiry at 60 s', async (t) => {
  const book = new ChallengeBook({ random: countingRandom() })
  t.ok(book.consume(book.issue(NOW).jti, NOW + 60), 'live at exp')
  const late = book.issue(NOW)
  t.notOk(book.consume(late.jti, NOW + 61), 'dead after exp')
  t.equal(book.size, 0, 'and forgotten')
  const short = new ChallengeBook({ random: countingRandom(), lifetime: 5 })
  t.equal(short.issue(NOW).exp, NOW + 5)
})

t.test('expired challenges are purged and the oldest dropped beyond capacity', async (t) => {
  const book = new ChallengeBook({ random: countingRandom(), capacity: 4 })
  const issued = Array.from({ length: 6 }, () => book.issue(NOW).jti)
  t.equal(book.size, 4)
  t.notOk(book.consume(issued[0], NOW), 'oldest dropped')
  t.notOk(book.consume(issued[1], NOW))
  for (const jti of issued.slice(2)) t.ok(book.consume(jti, NOW))

  book.issue(NOW)
  book.issue(NOW)
  const fresh = book.issue(NOW + 61)
  t.equal(book.size, 1, 'expired ones purged on issue')
  t.ok(book.consume(fresh.jti, NOW + 61))

  const big = new ChallengeBook({ random: countingRandom() })
  for (let i = 0; i < 1100; i++) big.issue(NOW)
  t.equal(big.size, 1024, 'default bound')
  t.throws(() => new ChallengeBook({ random: countingRandom(), capacity: 0 }), RangeError)
})

t.test("per client: a flood from one client recycles its own challenges, never another's", async (t) => {
  const book = new ChallengeBook({ random: countingRandom(), capacity: 8, perSource: 3 })
  const owner = book.issue(NOW, '10.0.0.1')
  const flood = Array.from({ length: 100 }, () => book.issue(NOW, '10.0.0.2').jti)
  t.equal(book.size, 4, "the flood holds its client's 3")
  t.notOk(book.consume(flood[96], NOW), "the flood's older ones are gone")
  for (const jti of flood.slice(97)) t.ok(book.consume(jti, NOW))
  t.ok(book.consume(owner.jti, NOW), "the owner's challenge outlived the flood")

  // Full of clients: the busiest gives way.
  const kept = ['a', 'b', 'c', 'd'].map((source) => book.issue(NOW, source).jti)
  const busy = Array.from({ length: 3 }, () => book.issue(NOW, 'busy').jti)
  book.issue(NOW, 'e')
  book.issue(NOW, 'f')
  t.equal(book.size, 8)
  t.notOk(book.consume(busy[0], NOW), 'the oldest of the client holding the most')
  for (const jti of kept) t.ok(book.consume(jti, NOW), 'clients with one keep theirs')
  t.throws(() => new ChallengeBook({ random: countingRandom(), perSource: 0 }), RangeError)
})

t.test('anything else is refused without an exception', async (t) => {
  const book = new ChallengeBook({ random: countingRandom() })
  const { jti } = book.issue(NOW)
  for (const bad of [
    undefined,
    null,
    42,
    {},
    '',
    'not base64!',
    jti.slice(0, -4),
    Buffer.alloc(32).toString('base64'),
  ]) {
    t.notOk(book.consume(bad, NOW), String(bad))
  }
  const other = new ChallengeBook({ random: countingRandom() })
  t.notOk(other.consume(jti, NOW), 'a challenge of another book (config nonces vs login)')
  t.ok(book.consume(jti, NOW), 'still live after the refusals')
})

t.test('timedNonce', async (t) => {
  const nonce = timedNonce(NOW, () => new Uint8Array(28).fill(9))
  t.equal(Buffer.from(nonce).readUInt32LE(0), NOW)
  t.same(nonce.subarray(4), new Uint8Array(28).fill(9))
  t.equal(
    Buffer.from(timedNonce(2 ** 32 + 5, () => new Uint8Array(28))).readUInt32LE(0),
    5,
    'the time wraps at 32 bits',
  )
  t.throws(() => timedNonce(NOW, () => new Uint8Array(27)), RangeError)
})
