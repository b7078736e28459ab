import { pidx } from '../../protocol/index.js'
import { b64, keyName } from './notify-fields.js'
import type { Subscriber } from './notify-records.js'
import type { NotifyStore } from './notify-store.js'

/**
 * The active pairings: by pid (the capability the app holds), and by device through an index of
 * `<eidx>.<pidx>` keys. A subscriber is written before its index entry and removed after it, so the
 * index never names a pairing that is not there; a lingering index entry is skipped.
 */
export class SubscriberBook {
  constructor(private readonly store: NotifyStore) {}

  async activate(subscriber: Subscriber): Promise<void> {
    await this.store.subscribers.put(pidx(subscriber.pid), subscriber)
    await this.store.pairings.put(`${pidx(subscriber.eid)}.${pidx(subscriber.pid)}`, subscriber.created)
  }

  async find(pid: Uint8Array): Promise<Subscriber | undefined> {
    return (await this.store.subscribers.get(keyName(pid)))?.value
  }

  /** The pairing `pid` when it is one of `eid`'s. */
  async ofDeviceFind(eid: Uint8Array, pid: Uint8Array): Promise<Subscriber | undefined> {
    const subscriber = await this.find(pid)
    return subscriber?.eid === b64(eid) ? subscriber : undefined
  }

  async ofDevice(eid: Uint8Array): Promise<Subscriber[]> {
    const found: Subscriber[] = []
    for (const key of await this.store.pairings.keys(`${keyName(eid)}.*`)) {
      const subscriber = (await this.store.subscribers.get(key.slice(key.indexOf('.') + 1)))?.value
      if (subscriber?.eid === b64(eid)) found.push(subscriber)
    }
    return found
  }

  async anyOf(eid: Uint8Array): Promise<boolean> {
    return (await this.ofDevice(eid)).length > 0
  }

  /** Ends a pairing; one the device removed is reported `DELETED` to its app (contract §3.5.2). */
  async remove(subscriber: Subscriber, now: number, byDevice: boolean): Promise<void> {
    await this.store.pairings.remove(`${pidx(subscriber.eid)}.${pidx(subscriber.pid)}`)
    await this.store.subscribers.remove(pidx(subscriber.pid))
    if (byDevice) await this.store.unpaired.put(pidx(subscriber.pid), now)
  }

  async wasRemoved(pid: Uint8Array): Promise<boolean> {
    return (await this.store.unpaired.get(keyName(pid))) !== undefined
  }
}
