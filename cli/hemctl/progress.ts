// A progress line on stderr: redrawn in place on a terminal; elsewhere (a log, a pipe) only the
// final line is written, so that redirected output holds no carriage returns, unless `lines` asks for
// every change as a line of its own (hemctl's --progress: the caller draws only the steps worth a line).
import type { HemctlIo } from './context.js'

const WIDTH = 30
const MIB = 1024 * 1024
const SPINNER = '|/-\\'

export interface Progress {
  /** `done` of `total` units (bytes), as a bar. */
  bar(done: number, total: number): void
  /** `done` bytes of `total`, when it is known (as `bar`), else the bytes so far. */
  bytes(done: number, total: number | undefined): void
  /** Work of unknown length: a spinner and what it is at. */
  spin(state: string): void
  /** Replaces the line with `final`, or clears it. */
  end(final?: string): void
}

export interface ProgressOptions {
  /** Off a terminal, write each change as a line. */
  lines?: boolean
}

export function progress(io: HemctlIo, label: string, o: ProgressOptions = {}): Progress {
  let shown = ''
  let turns = 0
  const lines = !io.stderrIsTTY && o.lines === true
  const draw = (line: string) => {
    if (!(io.stderrIsTTY || lines) || line === shown) return
    io.stderr.write(lines ? `${line}\n` : `\r\x1b[K${line}`)
    shown = line
  }
  const bar = (done: number, total: number) => {
    const ratio = total > 0 ? Math.min(1, done / total) : 1
    const filled = Math.round(ratio * WIDTH)
    // A line per tenth, not per chunk: a log keeps eleven lines of a file of any size.
    if (lines) return draw(`${label} ${Math.floor(ratio * 10) * 10}% of ${size(total)}`)
    draw(
      `${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ` +
        `${Math.floor(ratio * 100)}% ${size(done)}/${size(total)}`,
    )
  }
  return {
    bar,
    bytes(done, total) {
      if (total !== undefined) return bar(done, total)
      draw(lines ? `${label} ${Math.floor(done / MIB)} MiB so far` : `${label} ${size(done)} so far`)
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
export async function withProgress<T>(
  io: HemctlIo,
  label: string,
  work: (line: Progress) => Promise<T>,
  o: ProgressOptions = {},
): Promise<T> {
  const line = progress(io, label, o)
  try {
    return await work(line)
  } catch (err) {
    line.end()
    throw err
  }
}

export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < MIB) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / MIB).toFixed(1)} MiB`
}
