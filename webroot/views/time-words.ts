// Times in words, for the screens that show the device's clock, uptime and self-test times.

const UNITS: readonly (readonly [number, string])[] = [
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
]

/** `seconds` as days, hours and minutes ("2 days, 1 hour, 5 minutes"); under a minute, "less than a minute". */
export function durationWords(seconds: number): string {
  let left = Math.floor(Math.abs(seconds))
  const parts: string[] = []
  for (const [size, unit] of UNITS) {
    const count = Math.floor(left / size)
    left -= count * size
    if (count > 0) parts.push(`${count} ${unit}${count === 1 ? '' : 's'}`)
  }
  return parts.length === 0 ? 'less than a minute' : parts.join(', ')
}

/** Unix seconds as a UTC date and time ("2026-03-01 12:00:05 UTC"), the device's own zone; 0 is "never". */
export function unixTimeWords(seconds: number): string {
  if (seconds === 0) return 'never'
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** How long ago the browser's moment `at` (ms) was: "35 s ago", "4 min 5 s ago", then in words ("2 hours ago"). */
export function ageWords(at: number, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - at) / 1000))
  if (seconds < 60) return `${seconds} s ago`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s ago`
  return `${durationWords(seconds)} ago`
}
