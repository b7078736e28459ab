/** PEM files of a TLS server certificate and its key, as uWS's SSLApp loads them. */
export interface TlsFiles {
  certFile: string
  keyFile: string
}

/** A server under test, listening on 127.0.0.1. */
export interface ListeningServer {
  port: number
  close(): Promise<void>
}

/** The baselines hemd is measured against, each served by its own child process. */
export type BaselineKind = 'crypto' | 'primitives' | 'bus' | 'get' | 'download' | 'upload' | 'canned'

/** The request a load repeats on every connection (autocannon). */
export interface HttpLoad {
  kind: 'http'
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
  /** Connections of this load, when not the bench's (large transfers need fewer). */
  connections?: number
  /** The status each answer must have (a revalidation's 304); any 2xx when absent. */
  status?: number
}

/** A whole exchange repeated one at a time (a login, an upload), each timed from start to answer. */
export interface SerialLoad {
  kind: 'serial'
  /** One exchange; it throws unless it was answered 2xx (a non-2xx answer throws a Non2xxError). */
  run(): Promise<void>
}

/** One load to generate against one server. */
export interface Scenario {
  id: string
  title: string
  load: HttpLoad | SerialLoad
  /** Bytes of each request's or answer's payload, for the MB/s column of transfers. */
  payloadBytes?: number
  /** The load is on hemd (whose peak RSS and CPU time are taken per scenario), not on a baseline. */
  hemd?: boolean
  /** The load is on the metrics group's hemd without instruments. */
  unmetered?: boolean
  /**
   * The load is on the scaling group's hemd, whose bus the bench watches: the messages its gateway
   * publishes during each round are counted (bus-batch.ts).
   */
  busCounted?: boolean
}

export interface LoadSettings {
  /** Seconds per scenario and round. */
  duration: number
  connections: number
}

/** What one scenario measured (one round, or the median of rounds). Latencies in ms. */
export interface Sample {
  requestsPerSecond: number
  p50: number
  p99: number
  /** 2xx answers. */
  ok: number
  /** Connection errors and timeouts. */
  errors: number
  non2xx: number
  /** For a load on hemd: the CPU time its runtime process spent per 2xx answer, in µs. */
  cpuMicrosPerAnswer?: number
}
