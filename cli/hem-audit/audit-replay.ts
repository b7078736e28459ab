// hem-audit replay: the state of every machine of the device, at the end or at a given point.

import { parseOptions } from '../index.js'
import { audited, INPUT_HELP, inputOptions, iso, loadInput, verifyOptions, type AuditIo } from './audit-input.js'
import { usage } from './audit-finding.js'
import {
  type DeviceReplay,
  parseReplayPoint,
  replayDevice,
  type ReplayPoint,
  ReplayPointError,
} from '../../audit/index.js'

export const REPLAY_USAGE =
  'Usage: hem-audit replay [--key BASE64 | --key-file FILE] ' +
  `[--allow-open] [--head FILE] [--at POINT] [--json] FILES|DIR...

Verifies the files (and refuses them if they do not verify), then rebuilds the state of the
device by folding every record through the runtime's own machines: personalisation,
provisioning, the configuration and the key repository (which persist across boots), and the
disks (P), the firmware and app upgrades, health and lifecycle of the boot in progress. The
files must reach back to the device's first file. Records no seal or signed head covers are
unverified: the files are then refused, and nothing in them is replayed.

${INPUT_HELP}
  --at POINT        the state as of this point instead of the end:
                      FILEID:SEQ   that record included (SEQ in hex, as in the files)
                      SECONDS      Unix time: every record up to the first one later than it
                      ISO-8601     the same, e.g. 2024-05-01T12:00:00Z (a time needs its zone)
  --json            print the state as JSON
  -h, --help        show this help

Exit status: 0 replayed, 1 the files do not verify or a record cannot be replayed, 2 usage error.
`

export async function runReplay(args: string[], io: AuditIo): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    allowPositionals: true,
    options: { ...inputOptions, at: { type: 'string' } },
  })
  const at = values.at === undefined ? undefined : point(values.at)
  const input = await loadInput(values, positionals, io.env ?? {})
  const { publicKey, files, names } = input
  let state: DeviceReplay
  try {
    state = audited(names, () =>
      replayDevice(files, publicKey, { ...verifyOptions(values, input), ...(at ? { at } : {}) }),
    )
  } catch (err) {
    if (err instanceof ReplayPointError) usage(`--at: ${err.message}`)
    throw err
  }
  io.stdout.write(values.json ? `${JSON.stringify(state, null, 2)}\n` : renderText(state, names))
  return 0
}

function point(text: string): ReplayPoint {
  try {
    return parseReplayPoint(text)
  } catch (err) {
    return usage(`--at: ${(err as Error).message}`)
  }
}

function renderText(state: DeviceReplay, names: Map<string, string>): string {
  const { at, config, keys } = state
  const lines = [
    `at: ${names.get(at.file) ?? at.file}:seq ${at.seq.toString(16)} (${iso(at.time)}), boot ${state.boots}`,
    `variant: ${state.variant}`,
    `personalisation: ${state.personalisation}`,
    `provisioning: ${state.provisioning}`,
    `lifecycle: ${state.lifecycle}`,
    `health: ${state.health.state} (fls_state 0x${state.health.fls.toString(16).padStart(2, '0')})`,
    ...(state.disks ? [`disks: 0 ${state.disks['0']}, 1 ${state.disks['1']}`] : []),
    `upgrades: fw ${state.upgrades.fw}, ui ${state.upgrades.ui}`,
    'config:',
    ...Object.entries(config).map(
      ([field, value]) =>
        `  ${field}: ` +
        (typeof value === 'number' && field === 'storage_mode' ? `0x${value.toString(16)}` : JSON.stringify(value)),
    ),
    `keys: ${Object.keys(keys).length}`,
    ...Object.entries(keys).map(
      ([kid, key]) => `  ${kid}  ${key.type}  created ${iso(key.created)}  updated ${iso(key.updated)}`,
    ),
  ]
  return `${lines.join('\n')}\n`
}
