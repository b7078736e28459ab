// A QR code drawn in the page as SVG from the modules of the `qrcode` package (bundled): no image from
// anywhere, no canvas, no inline style, so the app's CSP holds as it is.
import QRCode from 'qrcode'

const SVG = 'http://www.w3.org/2000/svg'
/** The quiet zone a reader needs around the code, in modules. */
const QUIET = 4

/** The QR code of `text`, one square per dark module (`M x y h1v1h-1z`), `label` its text alternative. */
export function qrCodeSvg(text: string, label: string): SVGSVGElement {
  const { modules } = QRCode.create(text)
  const side = modules.size + 2 * QUIET
  let d = ''
  for (let row = 0; row < modules.size; row++)
    for (let col = 0; col < modules.size; col++)
      if (modules.get(row, col)) d += `M${col + QUIET} ${row + QUIET}h1v1h-1z`
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
