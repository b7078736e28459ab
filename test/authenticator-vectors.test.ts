// The authenticator's builders against the family's known answers, byte for byte, through the CLI's noble key
// provider: test/vectors/ext-auth-v1.json is encedo/encedo-authenticator tests/vectors/v1.json (its `origin` names
// the commit), copied from the contract's vectors (/work/shared/spec/vectors); ext-authreq-device.json is [C]'s.
// The same checks run through WebCrypto in authenticator-webcrypto.test.ts, under node and in Chromium.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { NobleKeys } from '../authenticator/index.js'
import { keySealer } from '../cli/hem-authenticator/passphrase-sealer.js'
import { vectorChecks } from './helpers/authenticator-vectors.js'

const read = (name: string) => JSON.parse(readFileSync(new URL(`vectors/${name}`, import.meta.url), 'utf8'))

t.test('every vector through noble over sealed keys', async (t) => {
  const keys = new NobleKeys(keySealer(), (length) => new Uint8Array(randomBytes(length)))
  const checks = await vectorChecks(keys, read('ext-auth-v1.json').vectors, read('ext-authreq-device.json'))
  for (const { name, actual, expected } of checks) t.same(actual, expected, name)
})
