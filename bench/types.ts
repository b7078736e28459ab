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
export type BaselineKind = 'crypto' | 'bus' | 'get'

/** One load to generate: a single request repeated on every connection. */
export interface Scenario {
  id: 'a' | 'b' | 'c' | 'd-bare' | 'd-hemd'
  title: string
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
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
}
