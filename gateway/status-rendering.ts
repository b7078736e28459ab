import type { Clock } from '../hal/index.js'
import type { CommandReply } from '../protocol/index.js'
import { EncodedJson } from './encoded-json.js'
import { hostnameShown, renderStatus } from './status.js'
import type { ReadContext } from './types.js'

/** What status renders from but the request and the clock: the same objects, the same texts. */
type RenderedFrom = Pick<ReadContext, 'variant' | 'system' | 'identity' | 'keystore' | 'storage' | 'upgrade'>

/** Which of the request's facts status depends on: over TLS, the hostname shown, a token. */
const TLS = 1
const HOSTNAME = 2
const TOKEN = 4

/**
 * `renderStatus`, written out once per change of what it renders from rather than per request:
 * status is the device's most asked read, and building and encoding its body cost more than the
 * rest of the answer. The request picks one of eight texts (by `TLS`, `HOSTNAME`, `TOKEN`); a new
 * second of the clock or of the uptime, and any new read model, renew them all. The bus decodes
 * every state event into a new object, so comparing the read models by identity sees a change on
 * the very next request, whichever way it came (an event, a resync after a reconnect).
 */
export class StatusRendering {
  private readonly texts: (EncodedJson | undefined)[] = []
  private uptime = NaN
  /** The clock's whole second, or undefined while it is not set. */
  private second: number | undefined
  private from: Partial<RenderedFrom> = {}

  render(ctx: ReadContext): CommandReply {
    const { clock } = ctx
    const now = clock.isSet() ? clock.now() : undefined
    const monotonic = clock.monotonic()
    const uptime = Math.floor((monotonic - ctx.system.bootedAt) / 1000)
    const second = now === undefined ? undefined : Math.floor(now / 1000)
    if (uptime !== this.uptime || second !== this.second || this.changed(ctx)) {
      this.texts.length = 0
      this.uptime = uptime
      this.second = second
      const { variant, system, identity, keystore, storage, upgrade } = ctx
      this.from = { variant, system, identity, keystore, storage, upgrade }
    }
    const slot =
      (ctx.tls ? TLS : 0) |
      (hostnameShown(ctx.identity.transport, ctx.host) ? HOSTNAME : 0) |
      (ctx.principal ? TOKEN : 0)
    let text = this.texts[slot]
    if (!text) {
      // Rendered at the instant read above, so that the text is the one of its second.
      const body = renderStatus({ ...ctx, clock: frozenClock(ctx.clock, now, monotonic) }).body
      text = new EncodedJson(JSON.stringify(body))
      this.texts[slot] = text
    }
    return { status: 200, body: text }
  }

  private changed(ctx: ReadContext): boolean {
    const from = this.from
    return (
      ctx.system !== from.system ||
      ctx.identity !== from.identity ||
      ctx.keystore !== from.keystore ||
      ctx.storage !== from.storage ||
      ctx.upgrade !== from.upgrade ||
      ctx.variant !== from.variant
    )
  }
}

function frozenClock(clock: Clock, now: number | undefined, monotonic: number): Clock {
  return {
    now: () => now ?? NaN,
    monotonic: () => monotonic,
    isSet: () => now !== undefined,
    sleep: clock.sleep,
    timer: clock.timer,
  }
}
