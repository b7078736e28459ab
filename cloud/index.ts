export { jetStreamState } from './buckets.js'
export type { BucketOptions, CloudHandler, CloudReply, CloudRequest, CloudRoute, CloudState } from './types.js'
