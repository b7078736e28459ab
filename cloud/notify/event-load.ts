import type { Versioned } from './json-bucket.js'
import type { NotifyContext } from './notify-context.js'
import { pathId } from './notify-fields.js'
import { type NotifyEvent, stillKept } from './notify-records.js'
import { NotifyRefusal } from './notify-refusal.js'

/** The event a path names, while it is kept (pending, or closed or expired less than 10 min ago); else a 404. */
export async function loadEvent(
  ctx: NotifyContext,
  eventidParam: string | undefined,
  now: number,
): Promise<Versioned<NotifyEvent>> {
  const found = await ctx.store.events.get(pathId(eventidParam, 'event'))
  if (!found || !stillKept(found.value, now)) throw new NotifyRefusal(404, 'not_found', 'no such event')
  return found
}
