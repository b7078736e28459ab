// An image's upload by XMLHttpRequest: fetch reports no upload progress, and the owner of a
// 16 MiB image over a slow link wants to see it move.
import { answerRefusal } from '../../device-session.js'
import { PageError } from '../../page-error.js'
import type { ImageKind } from './image-file.js'

/** The names the family's clients send (Content-Disposition), as the gateway expects them. */
const FILENAMES: Record<ImageKind, string> = { fw: 'firmware.bin', ui: 'webroot.tar' }

const CANCELLED = 'The upload was cancelled.'

/** The upload stopped before the device answered: cut off, or cancelled by the owner. */
export class UploadStoppedError extends PageError {
  override readonly name = 'UploadStoppedError'
}

export interface UploadControl {
  /** Called as the bytes leave: `sent` of `total`. */
  onProgress(sent: number, total: number): void
  /** Stops the upload when it fires (the owner's Cancel). */
  signal: AbortSignal
}

/** POSTs `file` to upload_<kind> with a bearer token; rejects with the typed refusal, or an UploadStoppedError. */
export function uploadImage(kind: ImageKind, file: Blob, token: string, control: UploadControl): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    const stop = () => xhr.abort()
    const path = `/api/system/upgrade/upload_${kind}`
    const done = (error?: Error) => {
      control.signal.removeEventListener('abort', stop)
      if (error) reject(error)
      else resolve()
    }
    xhr.open('POST', path)
    // Content-Length comes from the file; Expect: 100-continue is the browser's to send, and optional.
    xhr.setRequestHeader('Authorization', `Bearer ${token}`)
    xhr.setRequestHeader('Content-Type', 'application/octet-stream')
    xhr.setRequestHeader('Content-Disposition', `attachment; filename="${FILENAMES[kind]}"`)
    xhr.upload.onprogress = (event) =>
      control.onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    xhr.onload = () =>
      done(xhr.status === 200 ? undefined : answerRefusal(xhr.status, xhr.responseText, `POST ${path}`))
    xhr.onerror = () =>
      done(new UploadStoppedError('The upload was cut off: the device or the network dropped it. Upload it again.'))
    xhr.onabort = () => done(new UploadStoppedError(CANCELLED))
    if (control.signal.aborted) return done(new UploadStoppedError(CANCELLED))
    control.signal.addEventListener('abort', stop)
    xhr.send(file)
  })
}
