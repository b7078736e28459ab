import { chmod, mkdir, open, readFile, rename, stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { PairingRecord, PairingStore, Sealer, StoredPairing } from '../../authenticator/index.js'
import { newScryptParams, passphraseSealer, type ScryptParams } from './passphrase-sealer.js'

/** The store's file could not be used: unreadable, not ours, too open, or the passphrase does not open it. */
export class PairingFileError extends Error {
  override readonly name = 'PairingFileError'
}

const FORMAT = 'hem-authenticator-pairings-v1'
/** Sealed with the store's key when it is made: a wrong passphrase is refused even when no pairing is stored. */
const CHECK = new TextEncoder().encode(FORMAT)

/** A pairing in the file: its key as the sealer's text, under the name the file has always given it. */
type FilePairing = StoredPairing & { sealedAidPrv: string }

interface PairingFileContent {
  format: typeof FORMAT
  kdf: ScryptParams
  check: string
  pairings: FilePairing[]
}

/**
 * The CLI's pairings: one JSON file, mode 0600 in a 0700 folder, each `aid_prv` sealed with a key derived
 * from the passphrase (scrypt), rewritten whole through a temporary file so that a crash leaves the old one.
 */
export class PairingFile implements PairingStore<string> {
  private constructor(
    private readonly path: string,
    private content: PairingFileContent,
    readonly sealer: Sealer,
  ) {}

  /** Opens the file, or makes it (with a fresh salt) when there is none; the passphrase must open it. */
  static async open(path: string, passphrase: string): Promise<PairingFile> {
    const existing = await readContent(path)
    if (existing) {
      const sealer = await passphraseSealer(passphrase, existing.kdf)
      const opened = await sealer.open(existing.check).catch((err: unknown) => {
        throw new PairingFileError('the passphrase does not open the pairing store', { cause: err })
      })
      if (!Buffer.from(opened).equals(CHECK)) throw new PairingFileError('the pairing store is damaged')
      return new PairingFile(path, existing, sealer)
    }
    const kdf = newScryptParams()
    const sealer = await passphraseSealer(passphrase, kdf)
    const file = new PairingFile(path, { format: FORMAT, kdf, check: await sealer.seal(CHECK), pairings: [] }, sealer)
    await file.write()
    return file
  }

  list(): Promise<PairingRecord<string>[]> {
    return Promise.resolve(
      this.content.pairings.map(({ sealedAidPrv, ...pairing }) => ({ ...pairing, aidKey: sealedAidPrv })),
    )
  }

  async add({ aidKey, ...pairing }: PairingRecord<string>): Promise<void> {
    this.content = {
      ...this.content,
      pairings: [...this.content.pairings.filter((p) => p.pid !== pairing.pid), { ...pairing, sealedAidPrv: aidKey }],
    }
    await this.write()
  }

  async remove(pid: string): Promise<void> {
    this.content = { ...this.content, pairings: this.content.pairings.filter((p) => p.pid !== pid) }
    await this.write()
  }

  private async write(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 })
    const temporary = `${this.path}.tmp`
    const handle = await open(temporary, 'w', 0o600)
    try {
      await handle.chmod(0o600)
      await handle.writeFile(`${JSON.stringify(this.content, null, 2)}\n`)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temporary, this.path)
    await chmod(this.path, 0o600)
  }
}

async function readContent(path: string): Promise<PairingFileContent | undefined> {
  let mode: number
  try {
    mode = (await stat(path)).mode
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new PairingFileError(`cannot read the pairing store ${path}`, { cause: err })
  }
  // As ssh does with a private key: a store others may read is refused rather than used.
  if ((mode & 0o077) !== 0) throw new PairingFileError(`the pairing store ${path} is readable by others: chmod 600 it`)
  let json: unknown
  try {
    json = JSON.parse(await readFile(path, 'utf8'))
  } catch (err) {
    throw new PairingFileError(`the pairing store ${path} is not JSON`, { cause: err })
  }
  const content = json as Partial<PairingFileContent>
  if (content.format !== FORMAT || !saneKdf(content.kdf) || typeof content.check !== 'string')
    throw new PairingFileError(`${path} is not a hem-authenticator pairing store`)
  if (!Array.isArray(content.pairings)) throw new PairingFileError(`the pairing store ${path} has no pairing list`)
  return content as PairingFileContent
}

/** The file's scrypt parameters, bounded: an edited file must not make the CLI allocate gigabytes. */
function saneKdf(kdf: ScryptParams | undefined): boolean {
  if (kdf?.name !== 'scrypt' || typeof kdf.salt !== 'string') return false
  const { N, r, p } = kdf
  return (
    [N, r, p].every(Number.isSafeInteger) &&
    N >= 2 ** 14 &&
    N <= 2 ** 20 &&
    (N & (N - 1)) === 0 &&
    r >= 1 &&
    r <= 16 &&
    p >= 1 &&
    p <= 4
  )
}
