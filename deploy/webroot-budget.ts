// The management app's size budget: every file of a built web root, gzip-compressed as a
// browser would receive it, must together stay within WEBROOT_BUDGET_BYTES.
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'

/** 250 KB (issue 24): what a browser fetches on a first visit, compressed. */
export const WEBROOT_BUDGET_BYTES = 250 * 1000

export interface WebrootSize {
  files: { path: string; bytes: number; gzip: number }[]
  bytes: number
  gzip: number
}

export class WebrootBudgetError extends Error {
  override readonly name = 'WebrootBudgetError'
}

export async function measureWebroot(dir: string): Promise<WebrootSize> {
  const files: WebrootSize['files'] = []
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    const content = await readFile(path)
    files.push({ path: relative(dir, path), bytes: content.length, gzip: gzipSync(content, { level: 9 }).length })
  }
  files.sort((a, b) => a.path.localeCompare(b.path))
  return {
    files,
    bytes: files.reduce((sum, file) => sum + file.bytes, 0),
    gzip: files.reduce((sum, file) => sum + file.gzip, 0),
  }
}

/** One line per file and the total against the budget (the management app's, or the page's own). */
export function describeWebrootSize(size: WebrootSize, budget = WEBROOT_BUDGET_BYTES): string {
  const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`
  return [
    ...size.files.map((file) => `  ${file.path}: ${kb(file.bytes)}, ${kb(file.gzip)} gzip`),
    `  total: ${kb(size.bytes)}, ${kb(size.gzip)} gzip of a ${kb(budget)} budget`,
  ].join('\n')
}

/** Throws when the built page (`what`, by default the management app) is over its budget. */
export function checkWebrootBudget(
  size: WebrootSize,
  budget = WEBROOT_BUDGET_BYTES,
  what = 'the management app',
): void {
  if (size.gzip > budget)
    throw new WebrootBudgetError(`${what} is over its size budget:\n${describeWebrootSize(size, budget)}`)
}
