/**
 * The Node flags hemd runs with (the `hemd` launcher's shebang and `npm start` pass them too;
 * V8 reads them only at start-up). They size the heap for a device rather than a server: a
 * 4 MiB young generation per semi-space (Node's default grows to 16 MiB under load; a request's
 * garbage dies young, so scavenges stay cheap) and a 128 MiB old generation, about eight times
 * what hemd keeps live, which makes V8 collect before it grows the heap. Under 32 connections of
 * encrypt the peak resident memory drops from about 190 MB to about 100 MB, at the same speed
 * (README, performance record).
 */
export const HEMD_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--max-old-space-size=128']
