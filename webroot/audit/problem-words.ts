import type { VerifyProblem } from '../../protocol/browser.js'

/** A verifier's problem in words, with where it is: `file 6553f20e, line 6 (record 4 hex): MAC does not match`. */
export function problemWords(problem: VerifyProblem): string {
  const where = [`file ${problem.file}`]
  if (problem.line !== undefined) where.push(`line ${problem.line}`)
  const record = problem.seq === undefined ? '' : ` (record ${problem.seq.toString(16)} hex)`
  return `${where.join(', ')}${record}: ${problem.message}`
}
