// What the parts of the Keys screen share: the shell's context, one way to run an action (with
// the fail state's 409 told in words), and the moves between the parts.
import { ConflictError } from '../../../client/browser.js'
import { failStateWords } from '../../fail-state.js'
import { reworded } from '../../refusal-words.js'
import type { AppContext } from '../../view.js'

export interface KeysScreen {
  readonly ctx: AppContext
  /** One user action, as `ctx.feedback.run`, with the device's 409 explained. */
  run(doing: string, action: () => Promise<string>): Promise<boolean>
  /** After a change: the list again, at the page that holds `kid` when given. */
  reload(kid?: string): Promise<void>
  /** After a create, import or derive: the list at the page that holds `kid`, the key marked as new. */
  added(kid: string): Promise<void>
  /** Shows one key's details, its public key and what can be done with it. */
  open(kid: string): Promise<void>
  /** Opens the derive form with `kid` as its source. */
  deriveFrom(kid: string): void
}

/**
 * A 409 from a key route means the fail state (the only other cause, no owner yet, cannot
 * happen while logged in): the status says which fault, in words.
 */
export async function explained(error: unknown, ctx: AppContext): Promise<unknown> {
  if (!(error instanceof ConflictError)) return error
  const fls = await ctx.status().then(
    (status) => status.fls_state,
    () => 0,
  )
  if (fls === 0) return error
  return reworded(
    error,
    `The device is in its fail state (${failStateWords(fls).join('; ')}) and refuses every key operation ` +
      'until the fault is cleared',
  )
}

export function runner(ctx: AppContext): KeysScreen['run'] {
  return (doing, action) =>
    ctx.feedback.run(doing, async () => {
      try {
        return await action()
      } catch (error) {
        throw await explained(error, ctx)
      }
    })
}
