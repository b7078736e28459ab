// A file's upload by XMLHttpRequest (an image, a backup): fetch reports no upload progress, and the
// owner of a 16 MiB file over a slow link wants to see it move.
import { answerRefusal } from './device-session.js'
import { PageError } from './page-error.js'

const CANCELLED = 'The upload was cancelled.'

/** The upload stopped before the device answered: cut off, or cancelled by the owner. */
export class UploadStoppedError extends PageError {
  override readonly name = 'UploadStoppedError'
}

export interface UploadControl {
  /** Called as the bytes leave: `sent` of `total`. */
  onProgress(sent: number, total: number): void
  /** Stops the upload when it fires (the owner's Cancel). */
  signal?: AbortSignal
}

/**
 * POSTs `file` to `path` as `filename` (the name the route expects, Content-Disposition), with a bearer token
 * unless the route takes none; resolves to the answer's text, rejects with the typed refusal or an
 * UploadStoppedError.
 */
export function uploadFile(
  path: string,
  filename: string,
  file: Blob,
  token: string | undefined,
  control: UploadControl,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    const stop = () => xhr.abort()
    const done = (error?: Error) => {
      control.signal?.removeEventListener('abort', stop)
      if (error) reject(error)
      else resolve(xhr.responseText)
    }
    xhr.open('POST', path)
    // Content-Length comes from the file; Expect: 100-continue is the browser's to send, and optional.
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`)
    xhr.setRequestHeader('Content-Type', 'application/octet-stream')
    xhr.setRequestHeader('Content-Disposition', `attachment; filename="${filename}"`)
    xhr.upload.onprogress = (event) =>
      control.onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    xhr.onload = () =>
      done(xhr.status === 200 ? undefined : answerRefusal(xhr.status, xhr.responseText, `POST ${path}`))
    xhr.onerror = () =>
      done(new UploadStoppedError('The upload was cut off: the device or the network dropped it. Upload it again.'))
    xhr.onabort = () => done(new UploadStoppedError(CANCELLED))
    if (control.signal?.aborted) return done(new UploadStoppedError(CANCELLED))
    control.signal?.addEventListener('abort', stop)
    xhr.send(file)
  })
}
