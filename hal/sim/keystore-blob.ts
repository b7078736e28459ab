import { mkdir, open, readFile, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { KeystoreBlob } from '../types.js'
import { syncDirectory, writeFileAtomic } from './atomic-file.js'
import { errorCode } from './error-code.js'

/** The sealed backup key's file, in the key repository's directory (its owner's alone with --split). */
export const BACKUP_KEY_FILE = 'backup-key.bin'

/** A blob as one file, replaced by rename (writeFileAtomic), overwritten before it is removed. */
export class FileKeystoreBlob implements KeystoreBlob {
  constructor(private readonly path: string) {}

  async read(): Promise<Uint8Array | undefined> {
    try {
      return Uint8Array.from(await readFile(this.path))
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return undefined
      throw err
    }
  }

  async write(data: Uint8Array): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 })
    await writeFileAtomic(this.path, data, 0o600)
  }

  async erase(): Promise<void> {
    let file
    try {
      file = await open(this.path, 'r+')
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return
      throw err
    }
    try {
      // The sealed bytes go before the blocks go back to the file system, as the key slots' erase does.
      const { size } = await file.stat()
      await file.write(new Uint8Array(size), 0, size, 0)
      await file.datasync()
    } finally {
      await file.close()
    }
    await unlink(this.path)
    await syncDirectory(dirname(this.path))
  }
}
