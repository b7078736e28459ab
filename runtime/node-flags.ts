/**
 * glibc's allocator settings for hemd's processes. The transfers' chunks (128 and 256 KiB, copied
 * by uWS, msgpack, nats.js and the receiving side) live outside V8's heap. By default glibc raises
 * its mmap threshold once such a chunk is freed and then serves the next ones from its heaps, one
 * per thread that allocates, which keep the pages: after the first 16 MiB uploads the runtime's
 * resident memory stayed about 60 MB higher. Fixed thresholds and two arenas give the pages back.
 */
export const HEMD_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
}

/**
 * The Node flags hemd runs with (the `hemd` launcher's shebang and `npm start` pass them too;
 * V8 reads them only at start-up). They size the heap for a device rather than a server: an
 * 8 MiB young generation per semi-space (Node's default grows to 16 MiB under load; 4 MiB cost
 * about 8% of encrypt throughput in scavenges) and a 128 MiB old generation, about eight times
 * what hemd keeps live, which makes V8 collect before it grows the heap. Under 32 connections of
 * encrypt the peak resident memory drops from about 190 MB to about 110 MB
 * (docs/performance.md).
 */
export const HEMD_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--max-old-space-size=128']
