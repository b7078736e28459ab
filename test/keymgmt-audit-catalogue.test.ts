// hem-audit's view of the keys (audit/key-catalogue.ts) lists them as the device does (crypto-contract §1):
// created and derived keys `ATT,PKEY,…`, imported public keys without either flag.
import t from 'tap'
import { KeyCatalogue, MalformedKeyRecordError } from '../audit/key-catalogue.js'
import { LogResult, LogType } from '../protocol/journal.js'

const kid = (n: number) => n.toString(16).padStart(32, '0')

function record(type: number, data: Record<string, unknown>, result: number = LogResult.OK) {
  return { type, result, time: 1_700_000_000, decoded: { source: 200, rid: 'r', ...data } }
}

t.test('listed types of created, imported and derived keys of every kind', async (t) => {
  const keys = new KeyCatalogue()
  const made: [number, string, string | undefined, string][] = [
    [LogType.KEY_GENERATION, 'MLKEM768', undefined, 'ATT,PKEY,PQC,MLKEM768'],
    [LogType.KEY_GENERATION, 'SHA3-384', undefined, 'ATT,PKEY,SHA3-384'],
    [LogType.KEY_GENERATION, 'SECP384R1', 'ECDH,ExDSA', 'ATT,PKEY,ECDH,ExDSA,SECP384R1'],
    [LogType.KEY_IMPORT, 'MLDSA87', undefined, 'PQC,MLDSA87'],
    [LogType.KEY_IMPORT, 'ED448', undefined, 'ExDSA,ED448'],
    [LogType.KEY_IMPORT, 'SECP256K1', 'ExDSA', 'ExDSA,SECP256K1'],
    [LogType.KEY_DERIVE, 'AES256', undefined, 'ATT,PKEY,AES256'],
    [LogType.KEY_DERIVE, 'SECP256R1', 'ExDSA', 'ATT,PKEY,ExDSA,SECP256R1'],
  ]
  made.forEach(([logType, type, mode], i) =>
    keys.apply(record(logType, { kid: kid(i), type, ...(mode ? { mode } : {}), at: 1_700_000_000 + i })),
  )
  t.same(
    Object.values(keys.entries()).map((key) => key.type),
    made.map(([, , , listed]) => listed),
  )
})

t.test('a derive that failed changed no key; one undone is gone', async (t) => {
  const keys = new KeyCatalogue()
  keys.apply(record(LogType.KEY_DERIVE, { kid: kid(1), type: 'CURVE25519', at: 5 }))
  // Refusals name the source key (or none) and no key type: they are not key changes.
  keys.apply(record(LogType.KEY_DERIVE, { kid: kid(1), source: 400 }, LogResult.ERROR))
  keys.apply(record(LogType.KEY_DERIVE, { kid: kid(1), source: 406 }, LogResult.FAILED))
  keys.apply(record(LogType.KEY_DERIVE, { source: 400 }, LogResult.ERROR))
  t.same(keys.entries(), { [kid(1)]: { type: 'ATT,PKEY,ECDH,CURVE25519', created: 5, updated: 5 } })
  // A derive journaled, then not stored: the same record again, result ERROR.
  const derived = { kid: kid(2), type: 'ED25519', at: 6 }
  keys.apply(record(LogType.KEY_DERIVE, derived))
  keys.apply(record(LogType.KEY_DERIVE, { ...derived, source: 507 }, LogResult.ERROR))
  t.same(Object.keys(keys.entries()), [kid(1)])
  t.throws(() => keys.apply(record(LogType.KEY_GENERATION, { type: 'AES256' })), MalformedKeyRecordError)
  for (const [type, mode] of [
    ['MLKEM512', 'ECDH'],
    ['SECP256R1', 'SIGN'],
    ['SECP256R1', 'ExDSA,ECDH'],
  ])
    t.throws(
      () => keys.apply(record(LogType.KEY_IMPORT, { kid: kid(3), type, mode })),
      MalformedKeyRecordError,
      `${type} with mode ${mode}: never journaled by the keystore`,
    )
})
