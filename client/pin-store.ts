// Trust on first use: the SHA-256 fingerprint of each device's certificate, by origin, in the
// user's config dir. The first connection to an origin records what it presents; every later
// one must present the same certificate.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'

/** `$XDG_CONFIG_HOME/hemctl`, else `~/.config/hemctl`. */
export function defaultConfigDir(env: Record<string, string | undefined> = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'hemctl')
}

const FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/

export class PinStore {
  constructor(readonly file: string) {}

  static inConfigDir(dir: string): PinStore {
    return new PinStore(join(dir, 'known-devices.json'))
  }

  async get(origin: string): Promise<string | undefined> {
    return (await this.read())[origin]
  }

  async set(origin: string, fingerprint: string): Promise<void> {
    if (!FINGERPRINT.test(fingerprint))
      throw new RangeError('a fingerprint is 32 bytes in colon-separated upper-case hex')
    await this.write({ ...(await this.read()), [origin]: fingerprint })
  }

  /** True when there was a pin to forget. */
  async forget(origin: string): Promise<boolean> {
    const pins = await this.read()
    if (!(origin in pins)) return false
    delete pins[origin]
    await this.write(pins)
    return true
  }

  async all(): Promise<Record<string, string>> {
    return this.read()
  }

  private async read(): Promise<Record<string, string>> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {}
      throw err
    }
    // A damaged file must not silently drop every pin (which would trust anything anew).
    const value: unknown = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error(`${this.file} is not a map of origins to fingerprints`)
    return Object.fromEntries(
      Object.entries(value).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string' && FINGERPRINT.test(entry[1]),
      ),
    )
  }

  private async write(pins: Record<string, string>): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 })
    const tmp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`
    await writeFile(tmp, `${JSON.stringify(pins, null, 2)}\n`, { mode: 0o600 })
    await rename(tmp, this.file)
  }
}
