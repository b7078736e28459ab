import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'

/**
 * Just what the helpers ask of a tap test (fixture directories and teardowns), for a script that is not one (the
 * docs' screenshots): its directories in `scratch`, its teardowns in `teardowns`, for the script to run at its end.
 */
export function scriptTest(scratch: string, teardowns: (() => unknown)[]): Test {
  let made = 0
  return {
    testdir: (fixture: Record<string, object>) => {
      const dir = join(scratch, `dir-${(made += 1)}`)
      for (const name of Object.keys(fixture)) mkdirSync(join(dir, name), { recursive: true })
      return dir
    },
    teardown: (fn: () => unknown) => void teardowns.push(fn),
  } as unknown as Test
}
