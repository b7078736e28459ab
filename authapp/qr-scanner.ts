// Reads a QR code from the camera: the browser's BarcodeDetector where it has one, else jsQR on the video's frames.
import jsqr from 'jsqr'
import { CameraError } from './page-error.js'

// jsqr is CommonJS: under the package's NodeNext resolution its default import is the module, whose `default` the
// bundle (esbuild) gives as the decoder too.
const jsQR = jsqr.default

/** How often a frame is looked at: often enough to feel instant, rarely enough to leave the phone cool. */
const FRAME_MS = 150

interface Detector {
  detect(source: HTMLVideoElement): Promise<{ rawValue: string }[]>
}

/**
 * Shows the back camera in `video` until a QR code is read (its text) or `signal` aborts (undefined). The camera is
 * released either way. CameraError when there is no camera or no permission for it.
 */
export async function scanQrCode(video: HTMLVideoElement, signal: AbortSignal): Promise<string | undefined> {
  if (!navigator.mediaDevices?.getUserMedia)
    throw new CameraError('This browser offers no camera here (a page over plain HTTP has none). Paste the link.')
  let stream: MediaStream
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false })
  } catch (error) {
    const denied = error instanceof DOMException && error.name === 'NotAllowedError'
    throw new CameraError(
      denied
        ? 'The camera was not allowed. Allow it for this page, or paste the link.'
        : 'No camera could be opened. Paste the link instead.',
      { cause: error },
    )
  }
  try {
    video.srcObject = stream
    await video.play()
    const read = await reader()
    while (!signal.aborted) {
      const text = await read(video)
      if (text !== undefined) return text
      await new Promise((resolve) => setTimeout(resolve, FRAME_MS))
    }
    return undefined
  } finally {
    for (const track of stream.getTracks()) track.stop()
    video.srcObject = null
  }
}

type FrameReader = (video: HTMLVideoElement) => Promise<string | undefined>

async function reader(): Promise<FrameReader> {
  const native = await nativeDetector()
  if (native) return async (video) => (await native.detect(video))[0]?.rawValue
  const canvas = document.createElement('canvas')
  const context = canvas.getContext('2d', { willReadFrequently: true })
  if (!context) throw new CameraError('This browser cannot read the camera’s pictures. Paste the link.')
  return (video) => {
    const { videoWidth: width, videoHeight: height } = video
    if (width === 0 || height === 0) return Promise.resolve(undefined)
    canvas.width = width
    canvas.height = height
    context.drawImage(video, 0, 0, width, height)
    const found = jsQR(context.getImageData(0, 0, width, height).data, width, height, {
      inversionAttempts: 'attemptBoth',
    })
    return Promise.resolve(found?.data)
  }
}

async function nativeDetector(): Promise<Detector | undefined> {
  const Native = (globalThis as { BarcodeDetector?: BarcodeDetectorClass }).BarcodeDetector
  if (!Native) return undefined
  const formats = await Native.getSupportedFormats().catch(() => [] as string[])
  return formats.includes('qr_code') ? new Native({ formats: ['qr_code'] }) : undefined
}

interface BarcodeDetectorClass {
  new (options: { formats: string[] }): Detector
  getSupportedFormats(): Promise<string[]>
}
