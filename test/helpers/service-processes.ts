import { spawnSync } from 'node:child_process'

/**
 * The pids of this process's children whose command line names `--service NAME` (a `--split` device's services), by
 * name.
 */
export function serviceProcesses(): Map<string, number> {
  const lines = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
  const found = new Map<string, number>()
  for (const line of lines) {
    const match = /^\s*(\d+)\s.*--service (\w+)/.exec(line)
    if (match) found.set(match[2]!, Number(match[1]))
  }
  return found
}
