/**
 * Runs every step even when one before failed (a stop must release everything it can), then
 * throws the first failure, if there was one.
 */
export async function everyStep(steps: readonly (() => unknown)[], onFailure: (err: Error) => void): Promise<void> {
  let failure: unknown
  for (const step of steps) {
    try {
      await step()
    } catch (err) {
      failure ??= err
      onFailure(err as Error)
    }
  }
  if (failure !== undefined) throw failure
}
