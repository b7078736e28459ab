// The chip temperature over the last readings: a small line chart in inline SVG (DOM calls, no
// library), with its text alternative (now, lowest, highest) as the figure's caption.
import { h, uid } from '../dom.js'

export interface TemperatureSample {
  /** When the page read it (the browser's clock, ms). */
  at: number
  celsius: number
}

const SVG = 'http://www.w3.org/2000/svg'
const WIDTH = 320
const HEIGHT = 120
/** Room for the axis labels on the left, and a margin elsewhere. */
const LEFT = 44
const PAD = 8

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>) {
  const made = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attrs)) made.setAttribute(name, String(value))
  return made
}

const degrees = (celsius: number) => `${Number(celsius.toFixed(1))} °C`

export class TemperatureChart {
  readonly element: HTMLElement
  readonly #samples: TemperatureSample[] = []
  readonly #plot: SVGSVGElement
  readonly #caption: HTMLElement

  /** Keeps the last `size` samples, read every `everyMs`: the chart spans `size` intervals. */
  constructor(
    private readonly size: number,
    private readonly everyMs: number,
  ) {
    const captionId = uid('temp-caption')
    this.#caption = h('figcaption', { id: captionId }, 'No temperature read yet.')
    this.#plot = svg('svg', {
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: 'img',
      'aria-labelledby': captionId,
      class: 'temp-chart',
    })
    this.element = h('figure', { class: 'temp-figure' }, this.#caption)
    this.element.prepend(this.#plot)
  }

  get samples(): readonly TemperatureSample[] {
    return this.#samples
  }

  add(sample: TemperatureSample): void {
    this.#samples.push(sample)
    if (this.#samples.length > this.size) this.#samples.shift()
    this.#draw()
  }

  #draw(): void {
    const temps = this.#samples.map((s) => s.celsius)
    const [low, high] = [Math.min(...temps), Math.max(...temps)]
    const last = this.#samples.at(-1)!
    const first = this.#samples[0]!
    const span = Math.round((last.at - first.at) / 1000)
    const count = this.#samples.length
    this.#caption.textContent =
      `Temperature now ${degrees(last.celsius)}; lowest ${degrees(low)}, highest ${degrees(high)} ` +
      `over the last ${count} reading${count === 1 ? '' : 's'} (${span} seconds).`

    // The newest reading at the right edge; the chart spans the readings kept, in time.
    const [bottom, top] = [Math.floor(low) - 1, Math.ceil(high) + 1]
    const windowMs = this.everyMs * (this.size - 1)
    const x = (at: number) => WIDTH - PAD - ((last.at - at) / windowMs) * (WIDTH - PAD - LEFT)
    const y = (celsius: number) => PAD + ((top - celsius) / (top - bottom)) * (HEIGHT - 2 * PAD)
    const points = this.#samples.map((s) => `${x(s.at).toFixed(1)},${y(s.celsius).toFixed(1)}`)
    const label = (text: string, at: number) =>
      Object.assign(svg('text', { x: LEFT - 6, y: at, class: 'temp-axis', 'text-anchor': 'end' }), {
        textContent: text,
      })
    this.#plot.replaceChildren(
      svg('rect', { x: LEFT, y: PAD, width: WIDTH - PAD - LEFT, height: HEIGHT - 2 * PAD, class: 'temp-frame' }),
      label(`${top} °C`, PAD + 10),
      label(`${bottom} °C`, HEIGHT - PAD),
      count === 1
        ? svg('circle', { cx: x(last.at), cy: y(last.celsius), r: 3, class: 'temp-point' })
        : svg('polyline', { points: points.join(' '), class: 'temp-line' }),
    )
  }
}
