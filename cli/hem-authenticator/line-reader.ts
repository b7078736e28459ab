import { createInterface } from 'node:readline'

/**
 * Asks questions on stderr and reads the answers from stdin, a line each, through one readline for the
 * process (a readline per question would lose the lines a pipe already delivered). undefined at the input's end.
 */
export function lineReader(): (question: string) => Promise<string | undefined> {
  let lines: AsyncIterator<string> | undefined
  return async (question) => {
    lines ??= createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]()
    process.stderr.write(question)
    const next = await lines.next()
    return next.done ? undefined : next.value
  }
}
