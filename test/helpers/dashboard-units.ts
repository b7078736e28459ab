// Values as a Grafana panel's unit (fieldConfig.defaults.unit) writes them, for the dashboard's screenshot.

const SI = ['', 'k', 'M', 'G', 'T']
const IEC = ['B', 'KiB', 'MiB', 'GiB', 'TiB']

/** At most three significant digits, no trailing zeros: 0.25, 12.3, 512. */
function decimal(value: number): string {
  return String(Number(value.toPrecision(3)))
}

/** `value` over the largest power of `base` it reaches (up to the last prefix), and that prefix. */
function scaled(value: number, base: number, prefixes: string[]): [number, string] {
  let index = 0
  while (Math.abs(value) >= base && index < prefixes.length - 1) {
    value /= base
    index += 1
  }
  return [value, prefixes[index]!]
}

function seconds(value: number): string {
  const size = Math.abs(value)
  if (size === 0 || size >= 1) return `${decimal(value)} s`
  if (size >= 1e-3) return `${decimal(value * 1e3)} ms`
  return `${decimal(value * 1e6)} µs`
}

function short(value: number): string {
  const [number, prefix] = scaled(value, 1000, SI)
  return `${decimal(number)}${prefix}`
}

/** Grafana's units the dashboard uses; any other is written as `short` is. */
export function formatValue(value: number, unit = 'short'): string {
  switch (unit) {
    case 'bytes': {
      const [number, prefix] = scaled(value, 1024, IEC)
      return `${decimal(number)} ${prefix}`
    }
    case 's':
      return seconds(value)
    case 'reqps':
      return `${short(value)} req/s`
    case 'ops':
      return `${short(value)} ops/s`
    case 'celsius':
      return `${decimal(value)} °C`
    default:
      return short(value)
  }
}
