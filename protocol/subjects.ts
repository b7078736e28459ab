/** The subject namespace of one device. Every subject hemd uses is built here. */
export class Subjects {
  readonly root: string

  constructor(readonly devid: string) {
    if (!/^[0-9a-f]{16}$/.test(devid)) throw new TypeError('devid must be 16 lowercase hex chars')
    this.root = `hem.${devid}`
  }

  command(service: string, op: string): string {
    return `${this.root}.cmd.${service}.${op}`
  }

  commands(service: string): string {
    return `${this.root}.cmd.${service}.>`
  }

  state(service: string): string {
    return `${this.root}.evt.${service}.state`
  }

  /** Where a service reports a fault it found in itself; `*` subscribes to every service's. */
  fault(service: string): string {
    return `${this.root}.evt.${service}.fault`
  }

  /** Where a `--split` service process publishes its metrics' snapshot (bus/metrics-feed.ts); `*` for every one. */
  metrics(service: string): string {
    return `${this.root}.evt.${service}.metrics`
  }

  events(service = '*'): string {
    return service === '*' ? `${this.root}.evt.>` : `${this.root}.evt.${service}.>`
  }
}
