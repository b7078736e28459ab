/**
 * The Node flags hemd runs with (the `hemd` launcher's shebang and `npm start` pass them too;
 * V8 reads them only at start-up). They size the heap for a device rather than a server: an
 * 8 MiB young generation per semi-space (Node's default grows to 16 MiB under load; 4 MiB cost
 * about 8% of encrypt throughput in scavenges) and a 128 MiB old generation, about eight times
 * what hemd keeps live, which makes V8 collect before it grows the heap. Under 32 connections of
 * encrypt the peak resident memory drops from about 190 MB to about 115 MB (README,
 * performance record).
 */
export const HEMD_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--max-old-space-size=128']
