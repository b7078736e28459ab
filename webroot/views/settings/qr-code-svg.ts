// A QR code drawn in the page as SVG from the modules of `lean-qr/nano` (bundled: a sixth of `qrcode`'s size, which
// hemctl's terminal keeps): no image from anywhere, no canvas, no inline style, so the app's CSP holds as it is.
import { correction, generate } from 'lean-qr/nano'

const SVG = 'http://www.w3.org/2000/svg'
/** The quiet zone a reader needs around the code, in modules. */
const QUIET = 4

/** The QR code of `text`, one square per dark module (`M x y h1v1h-1z`), `label` its text alternative. */
export function qrCodeSvg(text: string, label: string): SVGSVGElement {
  // M, as `qrcode` chose by default: a phone's camera reads the pairing link off a screen at an angle.
  const modules = generate(text, { minCorrectionLevel: correction.M })
  const side = modules.size + 2 * QUIET
  let d = ''
  for (let row = 0; row < modules.size; row++)
    for (let col = 0; col < modules.size; col++)
      if (modules.get(col, row)) d += `M${col + QUIET} ${row + QUIET}h1v1h-1z`
  const svg = svgElement('svg', { viewBox: `0 0 ${side} ${side}`, role: 'img', 'aria-label': label, class: 'qr' })
  svg.append(
    svgElement('rect', { width: String(side), height: String(side), fill: '#fff' }),
    svgElement('path', { d, fill: '#000', 'shape-rendering': 'crispEdges' }),
  )
  return svg as SVGSVGElement
}

function svgElement(tag: string, attrs: Record<string, string>): SVGElement {
  const made = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attrs)) made.setAttribute(name, value)
  return made
}
