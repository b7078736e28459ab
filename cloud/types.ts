import type { KV } from '@nats-io/kv'

/** One HTTP request to the cloud, as its front hands it to a route's handler. */
export interface CloudRequest {
  method: 'GET' | 'POST' | 'DELETE'
  /** The path as received, without the query. */
  path: string
  /** The pattern's `:name` segments, percent-decoded. */
  params: Readonly<Record<string, string>>
  /** The parsed JSON body; undefined when the request had none. */
  body: unknown
  /** The client's address (rate limits, `ipinfo`). */
  ip: string
  /** Unix seconds: the cloud's clock, a parameter so that tests set it. */
  now: number
}

/**
 * A handler's answer: the front sends `body` as JSON with exact Content-Type and Content-Length, or, when it is
 * bytes (a file of the web authenticator's page), as they are with `headers` and without CORS.
 */
export interface CloudReply {
  status: number
  body: unknown
  headers?: Readonly<Record<string, string>>
}

export type CloudHandler = (req: CloudRequest) => Promise<CloudReply>

export interface CloudRoute {
  method: CloudRequest['method']
  /** `/notify/register/check/:rid`: literal segments and `:name` parameters, one segment each. */
  pattern: string
  handler: CloudHandler
}

export interface BucketOptions {
  /** How long JetStream keeps a value after its last write, ms; 0 or absent: for ever. */
  ttlMs?: number
}

/** Where the cloud's state lives: JetStream key-value buckets, shared by every instance of one cluster. */
export interface CloudState {
  /** The bucket `name`, made (with the cluster's replica count) on first use. */
  bucket(name: string, options?: BucketOptions): Promise<KV>
}
