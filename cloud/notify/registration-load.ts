import type { Versioned } from './json-bucket.js'
import type { NotifyContext } from './notify-context.js'
import { pathId } from './notify-fields.js'
import { type Registration, stillKept } from './notify-records.js'
import { NotifyRefusal } from './notify-refusal.js'

/** The registration a path names, while it is kept (waiting, or closed less than 10 min ago); else a 404. */
export async function loadRegistration(
  ctx: NotifyContext,
  ridParam: string | undefined,
  now: number,
): Promise<Versioned<Registration>> {
  const found = await ctx.store.registrations.get(pathId(ridParam, 'registration'))
  if (!found || !stillKept(found.value, now)) throw new NotifyRefusal(404, 'not_found', 'no such registration')
  return found
}
