export type Environment = Record<string, string | undefined>

export interface InputValues {
  key?: string | undefined
  'key-file'?: string | undefined
  stream?: string | undefined
  device?: string | undefined
  domain?: string | undefined
  'tls-ca'?: string | undefined
  'stream-generation'?: string | undefined
  head?: string[] | undefined
  'allow-open'?: boolean | undefined
  'allow-missing-start'?: boolean | undefined
}
