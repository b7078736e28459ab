import { mkdir, open, readdir, readFile, type FileHandle } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { ImageFormatError } from './errors.js'

/**
 * The images' payload: a ustar archive of regular files and directories. Packing is
 * deterministic (sorted, mtime 0, owner 0) so that one build gives one image. Unpacking reads
 * what GNU tar, bsdtar and this packer write (ustar, GNU magic, pax `path`/`size` records) and
 * refuses everything else: links, devices, absolute paths, `..`, names twice, files with entries inside.
 */
const BLOCK = 512
const PIECE = 1024 * 1024
const MAX_ENTRIES = 10_000

export interface ArchiveLimits {
  /** The archive's length in the source. */
  length: number
}

export interface ArchiveEntry {
  path: string
  type: 'file' | 'dir'
  size: number
}

/** Packs a directory's regular files and directories. */
export async function packDirectory(root: string): Promise<Buffer> {
  const entries = (await readdir(root, { recursive: true, withFileTypes: true }))
    .map((d) => ({ d, path: relative(root, join(d.parentPath, d.name)).split(sep).join('/') }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const blocks: Buffer[] = []
  for (const { d, path } of entries) {
    if (d.isDirectory()) blocks.push(entryHeader(`${path}/`, '5', 0, 0o755))
    else if (d.isFile()) {
      const data = await readFile(join(root, path))
      blocks.push(entryHeader(path, '0', data.length, 0o644), data, Buffer.alloc(padding(data.length)))
    } else throw new ImageFormatError(`${path} is neither a file nor a directory: images hold only those`)
  }
  blocks.push(Buffer.alloc(2 * BLOCK))
  return Buffer.concat(blocks)
}

/** A random-access source: the staged image file, from an offset on. */
export interface ArchiveSource {
  read(position: number, length: number): Promise<Buffer>
}

export function fileSource(file: FileHandle, offset: number): ArchiveSource {
  return {
    async read(position, length) {
      const bytes = Buffer.alloc(length)
      const { bytesRead } = await file.read(bytes, 0, length, offset + position)
      if (bytesRead !== length) throw new ImageFormatError('the archive ends inside an entry')
      return bytes
    },
  }
}

/** A source over bytes already in memory: what was checked is what is read, whatever happens to their file. */
export function bytesSource(bytes: Buffer, offset = 0): ArchiveSource {
  return {
    async read(position, length) {
      if (offset + position + length > bytes.length) throw new ImageFormatError('the archive ends inside an entry')
      return bytes.subarray(offset + position, offset + position + length)
    },
  }
}

/** Walks the archive, checking every entry; `onFile` receives each file's data in pieces. */
export async function walkArchive(
  source: ArchiveSource,
  limits: ArchiveLimits,
  onEntry: (entry: ArchiveEntry) => Promise<void>,
  onData?: (entry: ArchiveEntry, piece: Buffer) => Promise<void>,
): Promise<ArchiveEntry[]> {
  const seen = new Set<string>()
  // Directories count once any entry lies inside them, so a file cannot take a directory's name later.
  const kinds = new Map<string, ArchiveEntry['type']>()
  const entries: ArchiveEntry[] = []
  let position = 0
  let pax: Record<string, string> = {}
  for (;;) {
    if (position + BLOCK > limits.length) throw new ImageFormatError('the archive has no end marker')
    const header = await source.read(position, BLOCK)
    position += BLOCK
    if (header.every((b) => b === 0)) return entries
    checkHeader(header, position - BLOCK)
    const type = String.fromCharCode(header[156]!)
    const size = Number(pax.size ?? octal(header.subarray(124, 136), 'size'))
    if (!Number.isSafeInteger(size) || size < 0 || position + size + padding(size) > limits.length)
      throw new ImageFormatError('an entry runs past the archive')
    if (type === 'x' || type === 'g') {
      const records = parsePax(await source.read(position, size))
      if (type === 'x') pax = records
      position += size + padding(size)
      continue
    }
    const name = pax.path ?? ustarName(header)
    pax = {}
    if (type !== '0' && type !== '\0' && type !== '5')
      throw new ImageFormatError(
        `${JSON.stringify(name)}: entry type ${JSON.stringify(type)} is not allowed (files and directories only)`,
      )
    // `tar -C dir .` names the root itself: nothing to make.
    if (type === '5' && /^(\.\/?)+$/.test(name)) continue
    const path = safePath(name)
    if (seen.has(path)) throw new ImageFormatError(`${path} appears twice`)
    seen.add(path)
    if (seen.size > MAX_ENTRIES) throw new ImageFormatError(`more than ${MAX_ENTRIES} entries`)
    const entry: ArchiveEntry = { path, type: type === '5' ? 'dir' : 'file', size: type === '5' ? 0 : size }
    claimPath(kinds, entry)
    await onEntry(entry)
    for (let done = 0; done < entry.size; done += PIECE) {
      const piece = await source.read(position + done, Math.min(PIECE, entry.size - done))
      await onData?.(entry, piece)
    }
    entries.push(entry)
    position += size + padding(size)
  }
}

function claimPath(kinds: Map<string, ArchiveEntry['type']>, entry: ArchiveEntry): void {
  const parts = entry.path.split('/')
  for (let depth = 1; depth < parts.length; depth++) {
    const parent = parts.slice(0, depth).join('/')
    if (kinds.get(parent) === 'file') throw new ImageFormatError(`${entry.path} lies inside ${parent}, which is a file`)
    kinds.set(parent, 'dir')
  }
  if (entry.type === 'file' && kinds.get(entry.path) === 'dir')
    throw new ImageFormatError(`${entry.path} is a file, but other entries lie inside it`)
  kinds.set(entry.path, entry.type)
}

/** Unpacks into `dest`, which must not exist yet: nothing is ever written outside it or over anything. */
export async function extractArchive(
  source: ArchiveSource,
  limits: ArchiveLimits,
  dest: string,
): Promise<ArchiveEntry[]> {
  await mkdir(dest, { mode: 0o755 })
  let current: { path: string; file: FileHandle } | undefined
  const finish = async () => {
    await current?.file.sync()
    await current?.file.close()
    current = undefined
  }
  try {
    return await walkArchive(
      source,
      limits,
      async (entry) => {
        await finish()
        const target = join(dest, entry.path)
        if (entry.type === 'dir') return void (await mkdir(target, { recursive: true, mode: 0o755 }))
        await mkdir(dirname(target), { recursive: true, mode: 0o755 })
        current = { path: entry.path, file: await open(target, 'wx', 0o644) }
      },
      async (entry, piece) => {
        await current!.file.write(piece)
      },
    )
  } finally {
    await finish()
  }
}

function entryHeader(path: string, type: '0' | '5', size: number, mode: number): Buffer {
  const header = Buffer.alloc(BLOCK)
  const [prefix, name] = splitName(path)
  header.write(name, 0, 100, 'utf8')
  header.write(mode.toString(8).padStart(7, '0'), 100)
  header.write('0000000', 108)
  header.write('0000000', 116)
  header.write(size.toString(8).padStart(11, '0'), 124)
  header.write('00000000000', 136)
  header.write(type, 156)
  header.write('ustar\x0000', 257)
  header.write(prefix, 345, 155, 'utf8')
  header.fill(0x20, 148, 156)
  header.write(`${checksum(header).toString(8).padStart(6, '0')}\x00 `, 148)
  return header
}

function splitName(path: string): [string, string] {
  if (Buffer.byteLength(path) <= 100) return ['', path]
  for (let cut = path.lastIndexOf('/', path.length - 2); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const prefix = path.slice(0, cut)
    const name = path.slice(cut + 1)
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return [prefix, name]
  }
  throw new ImageFormatError(`${path} is too long for a ustar name`)
}

function checkHeader(header: Buffer, at: number): void {
  const magic = header.subarray(257, 265).toString('latin1')
  if (magic !== 'ustar\x0000' && magic !== 'ustar  \x00') throw new ImageFormatError(`no ustar header at byte ${at}`)
  const stored = octal(header.subarray(148, 156), 'checksum')
  const blanked = Buffer.from(header)
  blanked.fill(0x20, 148, 156)
  if (checksum(blanked) !== stored) throw new ImageFormatError(`bad header checksum at byte ${at}`)
}

function checksum(header: Buffer): number {
  let sum = 0
  for (const byte of header) sum += byte
  return sum
}

function octal(field: Buffer, what: string): number {
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^ +/, '')
  if (!/^[0-7]{1,12}$/.test(text)) throw new ImageFormatError(`bad ${what} field`)
  return parseInt(text, 8)
}

function ustarName(header: Buffer): string {
  const field = (start: number, length: number) => {
    const bytes = header.subarray(start, start + length)
    const end = bytes.indexOf(0)
    return bytes.subarray(0, end === -1 ? length : end).toString('utf8')
  }
  const prefix = field(345, 155)
  const name = field(0, 100)
  return prefix ? `${prefix}/${name}` : name
}

function parsePax(bytes: Buffer): Record<string, string> {
  const records: Record<string, string> = {}
  let at = 0
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at)
    const length = Number(bytes.subarray(at, space).toString('latin1'))
    if (space === -1 || !Number.isSafeInteger(length) || length <= space - at || at + length > bytes.length)
      throw new ImageFormatError('bad pax record')
    const record = bytes.subarray(space + 1, at + length - 1).toString('utf8')
    const equals = record.indexOf('=')
    if (equals === -1) throw new ImageFormatError('bad pax record')
    records[record.slice(0, equals)] = record.slice(equals + 1)
    at += length
  }
  if (records.size !== undefined && !/^\d{1,15}$/.test(records.size)) throw new ImageFormatError('bad pax size')
  return records
}

/** The entry's path relative to the archive root, or ImageFormatError when it could leave it. */
export function safePath(name: string): string {
  const trimmed = name.replace(/^(\.\/)+/, '').replace(/\/$/, '')
  const parts = trimmed.split('/')
  const bad =
    trimmed === '' ||
    name.startsWith('/') ||
    /[\0-\x1f\x7f\\]/.test(trimmed) ||
    parts.some((part) => part === '' || part === '.' || part === '..')
  if (bad) throw new ImageFormatError(`${JSON.stringify(name)} is not a safe relative path`)
  return trimmed
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK
}
