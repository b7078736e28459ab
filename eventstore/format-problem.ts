import type { VerifyProblem } from '../protocol/browser.js'

/** `NAME:seq N: message` (seq in hex, as in the file), `NAME:line N: message` or `NAME: message`. */
export function formatProblem(problem: VerifyProblem, name: string = problem.file): string {
  const where =
    problem.seq !== undefined
      ? `:seq ${problem.seq.toString(16)}`
      : problem.line !== undefined
        ? `:line ${problem.line}`
        : ''
  return `${name}${where}: ${problem.message}`
}
