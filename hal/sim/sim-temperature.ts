import { readFileSync } from 'node:fs'
import { HalCorruptError } from '../errors.js'
import type { TemperatureSensor } from '../types.js'
import { errorCode } from './error-code.js'

const DEFAULT_CELSIUS = 36

/** A stable chip temperature, unless a test writes another into the override file. */
export class SimTemperature implements TemperatureSensor {
  constructor(readonly overrideFile: string) {}

  readCelsius(): number {
    let text: string
    try {
      text = readFileSync(this.overrideFile, 'utf8')
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return DEFAULT_CELSIUS
      throw err
    }
    const celsius = Number(text.trim())
    if (text.trim() === '' || !Number.isFinite(celsius)) {
      throw new HalCorruptError(
        `${this.overrideFile} should hold a temperature in degrees Celsius, not ${JSON.stringify(text)}`,
      )
    }
    return Math.round(celsius)
  }
}
