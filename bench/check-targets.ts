import type { Sample, Scenario } from './types.js'

/** One target of issue 4, checked against this run's own baselines. */
export interface TargetCheck {
  label: string
  measured: number
  relation: '>=' | '<='
  limit: number
  unit: '' | 'MB'
  pass: boolean
}

const MB = 1024 * 1024

/**
 * The targets at the bench's connection count: encrypt ≥ 12 % of (a) and ≥ 75 % of (b), its p99
 * ≤ 10 × (a)'s; status ≥ 50 % of the bare GET; hemd's peak RSS ≤ 150 MB.
 */
export function checkTargets(samples: Record<Scenario['id'], Sample>, peakRssBytes: number): TargetCheck[] {
  const { a, b, c } = samples
  const check = (label: string, measured: number, relation: TargetCheck['relation'], limit: number, unit: TargetCheck['unit'] = '') => ({
    label,
    measured,
    relation,
    limit,
    unit,
    pass: relation === '>=' ? measured >= limit : measured <= limit,
  })
  return [
    check('encrypt req/s / bare ceiling (a)', c.requestsPerSecond / a.requestsPerSecond, '>=', 0.12),
    check('encrypt req/s / bus ceiling (b)', c.requestsPerSecond / b.requestsPerSecond, '>=', 0.75),
    check('encrypt p99 / bare ceiling (a) p99', c.p99 / a.p99, '<=', 10),
    check('status req/s / bare GET', samples['d-hemd'].requestsPerSecond / samples['d-bare'].requestsPerSecond, '>=', 0.5),
    check('hemd peak RSS (VmHWM)', peakRssBytes / MB, '<=', 150, 'MB'),
  ]
}
