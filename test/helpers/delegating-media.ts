import type { AppendHandle, JournalMedia, KeySlotMedia } from '../../hal/types.js'

/** A journal media passing everything on to `inner`: a test overrides only what it watches or breaks. */
export class DelegatingJournalMedia implements JournalMedia {
  constructor(readonly inner: JournalMedia) {}
  list() {
    return this.inner.list()
  }
  read(id: string) {
    return this.inner.read(id)
  }
  stream(id: string, end?: number) {
    return this.inner.stream(id, end)
  }
  size(id: string) {
    return this.inner.size(id)
  }
  readRange(id: string, start: number, length: number) {
    return this.inner.readRange(id, start, length)
  }
  open(id: string): Promise<AppendHandle> {
    return this.inner.open(id)
  }
}

/** `handle` with some of its writes replaced; its size stays the handle's own. */
export function overrideHandle(
  handle: AppendHandle,
  writes: Partial<Pick<AppendHandle, 'append' | 'truncate'>>,
): AppendHandle {
  return {
    get size() {
      return handle.size
    },
    append: writes.append ?? ((data) => handle.append(data)),
    truncate: writes.truncate ?? ((length) => handle.truncate(length)),
    close: () => handle.close(),
  }
}

/** Key slots passing everything on to `inner`: a test overrides only what it counts or breaks. */
export class DelegatingKeySlotMedia implements KeySlotMedia {
  constructor(readonly inner: KeySlotMedia) {}
  get slotCount() {
    return this.inner.slotCount
  }
  get slotSize() {
    return this.inner.slotSize
  }
  readAll() {
    return this.inner.readAll()
  }
  read(offset: number, length: number) {
    return this.inner.read(offset, length)
  }
  write(index: number, data: Uint8Array) {
    return this.inner.write(index, data)
  }
  erase() {
    return this.inner.erase()
  }
  close() {
    return this.inner.close()
  }
}
