// An image's upload by XMLHttpRequest: fetch reports no upload progress, and the owner of a
// 16 MiB image over a slow link wants to see it move.
import { DeviceError, refusal } from '../../device-session.js'
import type { ImageKind } from './image-file.js'

/** The names the family's clients send (Content-Disposition), as the gateway expects them. */
const FILENAMES: Record<ImageKind, string> = { fw: 'firmware.bin', ui: 'webroot.tar' }

const CANCELLED = 'The upload was cancelled.'

export interface UploadControl {
  /** Called as the bytes leave: `sent` of `total`. */
  onProgress(sent: number, total: number): void
  /** Stops the upload when it fires (the owner's Cancel). */
  signal: AbortSignal
}

/** POSTs `file` to upload_<kind> with a bearer token; rejects with a DeviceError (status 0 when cut off). */
export function uploadImage(kind: ImageKind, file: Blob, token: string, control: UploadControl): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    const stop = () => xhr.abort()
    const done = (error?: DeviceError) => {
      control.signal.removeEventListener('abort', stop)
      if (error) reject(error)
      else resolve()
    }
    xhr.open('POST', `/api/system/upgrade/upload_${kind}`)
    // Content-Length comes from the file; Expect: 100-continue is the browser's to send, and optional.
    xhr.setRequestHeader('Authorization', `Bearer ${token}`)
    xhr.setRequestHeader('Content-Type', 'application/octet-stream')
    xhr.setRequestHeader('Content-Disposition', `attachment; filename="${FILENAMES[kind]}"`)
    xhr.upload.onprogress = (event) =>
      control.onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    xhr.onload = () => done(xhr.status === 200 ? undefined : refusal(xhr.status, xhr.statusText, xhr.responseText))
    xhr.onerror = () =>
      done(new DeviceError(0, 'The upload was cut off: the device or the network dropped it. Upload it again.'))
    xhr.onabort = () => done(new DeviceError(0, CANCELLED))
    if (control.signal.aborted) return done(new DeviceError(0, CANCELLED))
    control.signal.addEventListener('abort', stop)
    xhr.send(file)
  })
}
