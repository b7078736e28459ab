import { request } from 'node:https'

/** The ETag a GET of `url` is answered with (the bench's self-signed TLS accepted); throws when there is none. */
export function etagOf(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, rejectUnauthorized: false }, (res) => {
      res.resume()
      const tag = res.headers.etag
      if (res.statusCode === 200 && tag) resolve(tag)
      else reject(new Error(`GET ${new URL(url).pathname} answered ${res.statusCode} without an ETag`))
    })
    req.on('error', reject)
    req.end()
  })
}
