// A progress line on stderr: redrawn in place on a terminal; elsewhere (a log, a pipe) only the
// final line is written, so that redirected output holds no carriage returns.
import type { HemctlIo } from './context.js'

const WIDTH = 30
const SPINNER = '|/-\\'

export interface Progress {
  /** `done` of `total` units (bytes), as a bar. */
  bar(done: number, total: number): void
  /** Work of unknown length: a spinner and what it is at. */
  spin(state: string): void
  /** Replaces the line with `final`, or clears it. */
  end(final?: string): void
}

export function progress(io: HemctlIo, label: string): Progress {
  let shown = ''
  let turns = 0
  const draw = (line: string) => {
    if (!io.stderrIsTTY || line === shown) return
    io.stderr.write(`\r\x1b[K${line}`)
    shown = line
  }
  return {
    bar(done, total) {
      const ratio = total > 0 ? Math.min(1, done / total) : 1
      const filled = Math.round(ratio * WIDTH)
      draw(
        `${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ` +
          `${Math.floor(ratio * 100)}% ${size(done)}/${size(total)}`,
      )
    },
    spin(state) {
      draw(`${label} ${SPINNER[turns++ % SPINNER.length]} ${state}`)
    },
    end(final) {
      if (io.stderrIsTTY && shown) io.stderr.write('\r\x1b[K')
      shown = ''
      if (final !== undefined) io.stderr.write(`${label} ${final}\n`)
    },
  }
}

/** Runs `work` with a progress line that is cleared if the work fails, so the error starts a clean line. */
export async function withProgress<T>(io: HemctlIo, label: string, work: (line: Progress) => Promise<T>): Promise<T> {
  const line = progress(io, label)
  try {
    return await work(line)
  } catch (err) {
    line.end()
    throw err
  }
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}
