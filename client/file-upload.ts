// A file as the device's upload routes take it (the firmware's, the app's, a backup's): the bytes as
// application/octet-stream, under the file name the route expects, with the progress of the bytes sent.
import type { RequestInput } from './transport.js'

export function fileUpload(
  body: Uint8Array,
  filename: string,
  onProgress?: (sent: number, total: number) => void,
): RequestInput {
  return {
    body,
    headers: {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': `attachment; filename="${filename}"`,
    },
    ...(onProgress ? { onProgress } : {}),
  }
}
