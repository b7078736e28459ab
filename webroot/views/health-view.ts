// The self-test on request, each of its answer's fields and each fail bit explained in words.
import { h } from '../dom.js'
import { describeFailState, failStateWords } from '../fail-state.js'
import { describeError } from '../feedback.js'
import { FLS, type SelfTestAnswer } from '../../protocol/browser.js'
import type { AppContext, View } from '../view.js'
import { FAIL_BIT_GUIDE, GATING_WORDS } from './fail-bit-guide.js'
import { selfTestFindings, selfTestRecordScope, type SelfTestFindings } from './self-test-record.js'
import { unixTimeWords } from './time-words.js'

/**
 * Any valid token runs the self-test: the login's own, already minted, so that it also runs while
 * a failed entropy source refuses every new login.
 */
const SELFTEST_SCOPE = 'system:config'

/** The entropy health tests (hal/ EntropyFailure), in words. */
const ENTROPY_TESTS: Record<string, string> = {
  repetition_count: 'the repetition count test (one value repeated too often)',
  adaptive_proportion: 'the adaptive proportion test (one value too frequent in a window)',
  source: 'the source delivered nothing',
}

const stateWords = (fls: number) => `${describeFailState(fls)} (fls_state 0x${fls.toString(16)})`

/** One row per set bit: the fault, what finds it, what clears it. */
function guideTable(fls: number): HTMLElement[] {
  if (fls === 0) return []
  const rows: HTMLTableRowElement[] = []
  for (let bit = 1; bit <= 0x80; bit <<= 1) {
    if (!(fls & bit)) continue
    const guide = FAIL_BIT_GUIDE[bit]!
    rows.push(
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, `0x${bit.toString(16).padStart(2, '0')}`),
        h('td', {}, failStateWords(bit)[0]!),
        h('td', {}, guide.foundBy),
        h('td', {}, guide.clears),
      ),
    )
  }
  const section = h(
    'div',
    { class: 'fail-guide' },
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { id: 'fail-bits' },
        h('caption', {}, 'The fail bits set, what finds each fault and what clears it'),
        h(
          'thead',
          {},
          h('tr', {}, ...['Bit', 'Fault', 'Found by', 'Clears'].map((col) => h('th', { scope: 'col' }, col))),
        ),
        h('tbody', {}, ...rows),
      ),
    ),
    h('p', {}, GATING_WORDS),
  )
  return [section]
}

/** The answer's named KATs and entropy test come from the journal, read only when one of them failed. */
type Findings = { found: SelfTestFindings | undefined } | { unread: string }

function katWords(answer: SelfTestAnswer, findings: Findings | undefined): string {
  const at = `ran at ${unixTimeWords(answer.last_kat_ts)}`
  if (!(answer.fls_state & FLS.KAT)) return `passed (${at})`
  if (findings && 'found' in findings && findings.found?.failed.length)
    return `failed (${at}): ${findings.found.failed.join(', ')}`
  return `failed (${at}); ${unnamed(findings, 'the failed tests')}`
}

function entropyWords(answer: SelfTestAnswer, findings: Findings | undefined): string {
  const at = unixTimeWords(answer.last_entropytest_ts)
  if (!(answer.fls_state & FLS.ENTROPY)) return `passed its health tests on fresh samples (last tested at ${at})`
  const test = findings && 'found' in findings ? findings.found?.entropy : undefined
  return test && test !== 'ok'
    ? `failed its health tests at ${at}: ${ENTROPY_TESTS[test] ?? test}`
    : `failed its health tests at ${at}; ${unnamed(findings, 'the failed test')}`
}

function unnamed(findings: Findings | undefined, what: string): string {
  const where = `the audit log's self-test record names ${what}`
  return findings && 'unread' in findings ? `${where}, which could not be read now: ${findings.unread}` : where
}

function recordsWords(stats: SelfTestAnswer['repo_stats']): string {
  const checked = `${stats.total} slot${stats.total === 1 ? '' : 's'} in use checked`
  const invalid =
    stats.invalid === 0
      ? 'every record intact'
      : `${stats.invalid} invalid (their keys are out of use; the audit log has a KEY_INTEGRITY_ERROR record)`
  return (
    `${checked}: ${invalid}; ${stats.deleted} deleted, ${stats.fragmented} deleted below the highest slot in use ` +
    `(fragmented), ${stats.freeslots} never written`
  )
}

function seWords(se: number | undefined): string {
  if (se === undefined) return 'none on this variant (E)'
  return se === 0
    ? 'answers: it signed a probe with its log key and the signature checks'
    : `state ${se}: it did not sign, or its signature did not check (reported only: it raises no fail bit)`
}

function resultRows(answer: SelfTestAnswer, findings: Findings | undefined): [string, string][] {
  return [
    ['Ran at', unixTimeWords(answer.selftest_ts)],
    ['Fail state after it', stateWords(answer.fls_state)],
    ['Known-answer tests', katWords(answer, findings)],
    ['Entropy source', entropyWords(answer, findings)],
    ['Key records', recordsWords(answer.repo_stats)],
    ['Secure element', seWords(answer.se_state)],
    [
      'The self-test before',
      `${unixTimeWords(answer.last_selftest_ts)} (the boot's start-up tests, the periodic one every 5 minutes, ` +
        `or one asked for), which left: ${stateWords(answer.last_fls_state)}`,
    ],
  ]
}

async function runSelfTest(ctx: AppContext, result: HTMLElement, now: HTMLElement): Promise<string> {
  const answer = (await ctx.session.get('/api/system/selftest', SELFTEST_SCOPE)) as SelfTestAnswer
  let findings: Findings | undefined
  if (answer.fls_state & (FLS.KAT | FLS.ENTROPY)) {
    ctx.feedback.progress('Reading the self-test record from the audit log…')
    try {
      findings = { found: await selfTestFindings(ctx.session, answer.selftest_ts) }
    } catch (error) {
      findings = { unread: describeError(error) }
    }
  }
  now.textContent = `Now: ${stateWords(answer.fls_state)}.`
  // The banner too: the self-test may have found a new fault.
  await ctx.status().catch(() => undefined)
  const passed = answer.fls_state === 0
  result.replaceChildren(
    h('h3', { id: 'selftest-title' }, 'Self-test result'),
    h('p', { class: passed ? 'selftest-passed' : 'selftest-failed' }, passed ? 'Passed: no fault.' : 'Failed.'),
    h('dl', { id: 'selftest' }, ...resultRows(answer, findings).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    ...guideTable(answer.fls_state | answer.last_fls_state),
  )
  return passed ? 'The self-test passed.' : `The self-test found: ${describeFailState(answer.fls_state)}.`
}

export const healthView: View = {
  path: 'health',
  title: 'Health',
  async show(root, ctx) {
    // The journal's token now, while a login still works: a failed entropy source refuses new logins (409),
    // and the self-test record that names the failed test is then still readable.
    void ctx.session.authorized(selfTestRecordScope, async () => undefined).catch(() => undefined)
    const status = await ctx.status()
    const now = h('p', { id: 'health-now' }, `Now: ${stateWords(status.fls_state)}.`)
    const result = h('section', { 'aria-labelledby': 'selftest-title', id: 'selftest-result' })
    const before = h('div', {}, ...guideTable(status.fls_state))
    root.replaceChildren(
      h(
        'p',
        {},
        'The self-test runs, now, the known-answer tests of the crypto engine, the health tests of the entropy ' +
          'source on fresh samples, and a check of every stored key record; the device also runs it at boot and ' +
          'every 5 minutes. It runs in the fail state too. A fault it finds sets its fail bit.',
      ),
      now,
      before,
      h(
        'button',
        {
          type: 'button',
          onclick: () =>
            void ctx.feedback.run('Running the self-test…', async () => {
              const done = await runSelfTest(ctx, result, now)
              before.replaceChildren()
              return done
            }),
        },
        'Run the self-test',
      ),
      result,
    )
  },
}
